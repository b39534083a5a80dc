import { listResponse } from '#shared/scim/lists.ts';
import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { RESOURCE_TYPES } from '#shared/scim/resources.ts';

export const handler = scimHandler({
  handle: async () => scimJson(200, listResponse(RESOURCE_TYPES.length, { startIndex: 1, count: RESOURCE_TYPES.length }, RESOURCE_TYPES)),
});
