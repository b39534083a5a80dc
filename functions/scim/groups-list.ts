import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { listScimGroups } from '#shared/scim/groups.ts';

export const handler = scimHandler({
  handle: async ({ ctx, query }) => scimJson(200, await listScimGroups(ctx, query)),
});
