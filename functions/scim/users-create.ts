import { scimHandler, scimJson, scimReplayGate } from '#shared/scim/handler.ts';
import { createScimUser } from '#shared/scim/users.ts';

export const handler = scimHandler({
  body: () => import('#shared/schemas/bodies/scim.ts').then((m) => m.ScimUserBody),
  handle: async ({ ctx, body }) => {
    const user = await createScimUser(ctx, body);
    return scimJson(201, user, { location: user.meta.location });
  },
  authorizeReplay: scimReplayGate,
});
