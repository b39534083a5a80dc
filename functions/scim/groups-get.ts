import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { getScimGroup } from '#shared/scim/groups.ts';

export const handler = scimHandler({
  handle: async ({ ctx, params, query }) => scimJson(200, await getScimGroup(ctx, params.id!, query)),
});
