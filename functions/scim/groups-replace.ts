import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { replaceScimGroup } from '#shared/scim/groups.ts';

export const handler = scimHandler({
  body: () => import('#shared/schemas/bodies/scim.ts').then((m) => m.ScimGroupBody),
  handle: async ({ ctx, params, body }) => scimJson(200, await replaceScimGroup(ctx, params.id!, body)),
});
