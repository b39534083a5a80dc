import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { listScimUsers } from '#shared/scim/users.ts';

export const handler = scimHandler({
  handle: async ({ ctx, query }) => scimJson(200, await listScimUsers(ctx, query)),
});
