import { listResponse } from '#shared/scim/lists.ts';
import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { schemaDocuments } from '#shared/scim/resources.ts';

export const handler = scimHandler({
  handle: async () => {
    const schemas = schemaDocuments();
    return scimJson(200, listResponse(schemas.length, { startIndex: 1, count: schemas.length }, schemas));
  },
});
