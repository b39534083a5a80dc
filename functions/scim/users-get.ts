import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { getScimUser } from '#shared/scim/users.ts';

export const handler = scimHandler({
  handle: async ({ ctx, params, query }) => scimJson(200, await getScimUser(ctx, params.id!, query)),
});
