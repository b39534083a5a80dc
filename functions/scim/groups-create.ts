import { scimHandler, scimJson, scimReplayGate } from '#shared/scim/handler.ts';
import { createScimGroup } from '#shared/scim/groups.ts';
import { scimUrl } from '#shared/scim/resources.ts';

export const handler = scimHandler({
  body: () => import('#shared/schemas/bodies/scim.ts').then((m) => m.ScimGroupBody),
  handle: async ({ ctx, body }) => {
    const group = await createScimGroup(ctx, body);
    return scimJson(201, group, { location: scimUrl(`Groups/${group.id}`) });
  },
  authorizeReplay: scimReplayGate,
});
