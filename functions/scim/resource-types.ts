import { listResponse } from '#shared/scim/lists.ts';
import { scimHandler, scimJson } from '#shared/scim/handler.ts';
import { resourceTypes } from '#shared/scim/resources.ts';

export const handler = scimHandler({
  handle: async () => {
    const types = resourceTypes();
    return scimJson(200, listResponse(types.length, { startIndex: 1, count: types.length }, types));
  },
});
