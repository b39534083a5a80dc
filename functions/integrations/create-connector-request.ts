import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import {
  connectorRequestAccessSource,
  connectorRequestChecks,
  recordConnectorRequest,
} from '#shared/domain/integrations/connector-requests.ts';
import { presentConnectorRequest } from '#shared/presenters/integrations.ts';

/** 201 when this request put the connector on the tenant's list, 200 when it was already there. */
export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/connector-request-create.ts').then((m) => m.ConnectorRequestCreateBody),
  handle: async ({ ctx, body }) => {
    const { record, created } = await recordConnectorRequest(ctx, body);
    return recordResponse(
      created ? 201 : 200,
      'connector_request',
      presentConnectorRequest(record),
      connectorRequestChecks(ctx),
      connectorRequestAccessSource(ctx),
    );
  },
  // any active user may ask for a connector, viewers too (contract section 5): the caller check is the whole gate
  authorizeReplay: () => undefined,
});
