import { listResponse } from '#shared/scim/lists.ts';
import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { SCHEMAS } from '#shared/scim/resources.ts';

export const handler = scimHandler({
  handle: async () => scimJson(200, listResponse(SCHEMAS.length, { startIndex: 1, count: SCHEMAS.length }, SCHEMAS)),
});
