import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { connectorRequestCollectionChecks, listConnectorRequests } from '#shared/domain/integrations/connector-requests.ts';
import { presentConnectorRequest } from '#shared/presenters/integrations.ts';

export const handler = apiHandler({
  handle: async ({ ctx, query }) => {
    const result = await listConnectorRequests(ctx, query);
    return listResponse('connector_request', result, result.records.map(presentConnectorRequest), connectorRequestCollectionChecks(ctx));
  },
});
