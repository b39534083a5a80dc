import { SUPPORT_ISSUE_QUEUE } from '#shared/domain/integrations/support.ts';
import type { Route, Worker } from '#shared/routes/types.ts';
import {
  ConnectorRequestCreateBody,
  ConnectorRequestListResponse,
  ConnectorRequestResponse,
  DataSourceCreateBody,
  DataSourceResponse,
} from '#shared/schemas/integrations.ts';

const tag = 'integrations';

export const integrationRoutes: Route[] = [
  {
    method: 'POST',
    path: '/connector_requests',
    handler: 'functions/integrations/create-connector-request.ts',
    auth: 'jwt',
    scope: 'data_sources',
    table: 'write',
    sendsTo: [SUPPORT_ISSUE_QUEUE],
    doc: {
      summary:
        "Request a connector (any member, viewers included): recorded once per tenant and name ignoring case and repeated whitespace, idempotent per requester; each new requester's issue is filed with the support tool when one is configured",
      tag,
      body: ConnectorRequestCreateBody,
      success: {
        status: 201,
        schema: ConnectorRequestResponse,
        description:
          "201 when the connector was added to the tenant's list of requested connections; 200 (same body) when it was already there: the caller is added to its requesters, or nothing changes if the caller had already asked.",
      },
      alsoSuccess: [
        {
          status: 200,
          description:
            'The connector was already requested: the caller is added to its requesters, or nothing changes if the caller had already asked',
        },
      ],
    },
  },
  {
    method: 'GET',
    path: '/connector_requests',
    handler: 'functions/integrations/list-connector-requests.ts',
    auth: 'jwt',
    scope: 'data_sources',
    table: 'read',
    doc: {
      summary: "The tenant's requested connections (admins), oldest first",
      tag,
      extension: true,
      list: true,
      success: { status: 200, schema: ConnectorRequestListResponse },
    },
  },
  {
    method: 'POST',
    path: '/data_sources',
    handler: 'functions/integrations/create-data-source.ts',
    auth: 'jwt',
    scope: 'data_sources',
    table: 'write',
    doc: {
      summary: "Add a data source to a goal the caller can update; the goal's data_sources_count moves with it",
      tag,
      extension: true,
      body: DataSourceCreateBody,
      success: { status: 201, schema: DataSourceResponse },
    },
  },
  {
    method: 'GET',
    path: '/data_sources/{id}',
    handler: 'functions/integrations/get-data-source.ts',
    auth: 'jwt',
    scope: 'data_sources',
    table: 'read',
    doc: {
      summary:
        "Get a data source; id is '<tenant_uuid>_<data_source_uuid>' or the uuid (another tenant's prefix: 404). Needs the linked goal visible (403 otherwise)",
      tag,
      success: { status: 200, schema: DataSourceResponse },
    },
  },
];

export const integrationWorkers: Worker[] = [
  // Files connector requests with the external support tool over its webhook. No table, no e-mail: the message carries everything.
  {
    queue: SUPPORT_ISSUE_QUEUE,
    handler: 'functions/workers/support-issue.ts',
    maxReceiveCount: 5,
    batchSize: 10,
    timeoutSeconds: 30,
    table: 'none',
    needs: ['support:webhook'],
  },
];
