import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { replaceScimUser } from '#shared/scim/users.ts';

export const handler = scimHandler({
  body: () => import('#shared/schemas/bodies/scim.ts').then((m) => m.ScimUserBody),
  handle: async ({ ctx, params, body }) => scimJson(200, await replaceScimUser(ctx, params.id!, body)),
});
