import { DATA_SOURCE_SYNC_CONCURRENCY, DATA_SOURCE_SYNC_QUEUE } from '#shared/domain/integrations/entity.ts';
import { SUPPORT_ISSUE_QUEUE } from '#shared/domain/integrations/support.ts';
import { duePartitionPrefix } from '#shared/domain/integrations/sync-due.ts';
import type { Route, Schedule, Worker } from '#shared/routes/types.ts';
import {
  ConnectorRequestCreateBody,
  ConnectorRequestListResponse,
  ConnectorRequestResponse,
  DataSourceCreateBody,
  DataSourceRecordSchema,
  DataSourceCreatedResponse,
  DataSourcePushBody,
  DataSourceResponse,
  DataSourceSyncListResponse,
  DataSourceSyncQueuedResponse,
  DataSourceUpdateBody,
} from '#shared/schemas/integrations.ts';
import { CheckinResponse } from '#shared/schemas/checkins.ts';

const tag = 'integrations';

export const integrationRoutes: Route[] = [
  {
    method: 'POST',
    path: '/connector_requests',
    handler: 'functions/integrations/create-connector-request.ts',
    auth: 'jwt',
    door: 'rest',
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
    door: 'rest',
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
    door: 'rest',
    scope: 'data_sources',
    table: 'write',
    needs: ['kms:webhook-secrets'],
    doc: {
      summary:
        "Add a data source to a goal the caller can update; the goal's data_sources_count moves with it, and a tenant has at most 100 (422 too_many). http_json sources are fetched on their schedule (header values sealed, never returned, sent only to the url's origin; the url follows the webhook rules, 422); a push source's push_secret is in this response only. Its syncs and pushes write as its creator; a service account's token creating a push or http_json source needs goals:write as well (403 insufficient_scope)",
      tag,
      extension: true,
      body: DataSourceCreateBody,
      success: { status: 201, schema: DataSourceCreatedResponse },
    },
  },
  {
    method: 'GET',
    path: '/data_sources/{id}',
    handler: 'functions/integrations/get-data-source.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'data_sources',
    table: 'read',
    doc: {
      summary:
        "Get a data source; id is '<tenant_uuid>_<data_source_uuid>' or the uuid (another tenant's prefix: 404). Needs the linked goal visible (403 otherwise)",
      tag,
      success: { status: 200, schema: DataSourceResponse },
    },
  },
  {
    method: 'PUT',
    path: '/data_sources/{id}',
    handler: 'functions/integrations/update-data-source.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'data_sources',
    table: 'write',
    needs: ['kms:webhook-secrets'],
    doc: {
      summary: "Change a data source: name, config, status active or paused (the goal's editors; 403 otherwise, 404 outside the tenant)",
      tag,
      extension: true,
      body: DataSourceUpdateBody,
      success: { status: 200, schema: DataSourceResponse },
    },
  },
  {
    method: 'POST',
    path: '/data_sources/{id}/sync',
    handler: 'functions/integrations/sync-data-source.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'data_sources',
    // it writes nothing itself, but an Idempotency-Key's record is a write (read only, a keyed POST was a 500)
    table: 'write',
    sendsTo: [DATA_SOURCE_SYNC_QUEUE],
    doc: {
      summary:
        "Run an http_json source's sync now (the goal's editors, whatever its status): 202, its attempt appears in GET /data_sources/{id}/syncs; another kind is 422",
      tag,
      extension: true,
      success: { status: 202, schema: DataSourceSyncQueuedResponse },
    },
  },
  {
    method: 'GET',
    path: '/data_sources/{id}/syncs',
    handler: 'functions/integrations/list-data-source-syncs.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'data_sources',
    table: 'read',
    doc: {
      summary: "A data source's sync log, newest first (readable by whoever can see its goal; kept 90 days)",
      tag,
      extension: true,
      list: true,
      success: { status: 200, schema: DataSourceSyncListResponse },
    },
  },
  {
    method: 'POST',
    path: '/data_sources/{id}/values',
    handler: 'functions/integrations/push-data-source-value.ts',
    // No JWT: the credential is the source's push secret (Authorization: Bearer <push_secret>), checked by the
    // function in constant time; any mismatch is 401. Rate limited as requests of the source's creator.
    auth: 'public',
    door: 'push',
    table: 'write',
    doc: {
      summary:
        'Push a value to a push data source with Authorization: Bearer <push_secret> (no user token): 201 with the check-in, written by the source creator as it is now (Idempotency-Key honoured; a wrong or missing secret is 401, and so is a creator who can no longer write: an inactive user, or a service account disabled, deleted or without goals:write)',
      tag,
      extension: true,
      body: DataSourcePushBody,
      success: { status: 201, schema: CheckinResponse },
    },
  },
  // last of the data-source rows: the route table's order is the fuzzer's, and this one removes its fixture
  {
    method: 'DELETE',
    path: '/data_sources/{id}',
    handler: 'functions/integrations/delete-data-source.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'data_sources',
    table: 'write',
    doc: {
      summary: "Delete a data source and its schedule (the goal's editors); answers the flat deleted record",
      tag,
      extension: true,
      success: { status: 200, schema: DataSourceRecordSchema },
    },
  },
];

export const integrationWorkers: Worker[] = [
  // One run of one http_json source per message: charged one unit of its tenant's budget (a refused run is sent
  // again later, to its own queue), fetched under the SSRF guard, written as a check-in when the value changed.
  // A bounded number of invocations at once, across tenants: syncs never hold the account's functions.
  {
    queue: DATA_SOURCE_SYNC_QUEUE,
    handler: 'functions/workers/data-source-sync.ts',
    maxReceiveCount: 5,
    batchSize: 5,
    timeoutSeconds: 60,
    table: 'write',
    sendsEmail: true,
    sendsTo: [DATA_SOURCE_SYNC_QUEUE],
    needs: ['kms:webhook-secrets'],
    maxConcurrency: DATA_SOURCE_SYNC_CONCURRENCY,
    rateLimited: true,
  },
  // Files connector requests with the external support tool over its webhook. No table, no e-mail: the message carries everything.
  {
    queue: SUPPORT_ISSUE_QUEUE,
    handler: 'functions/workers/support-issue.ts',
    maxReceiveCount: 5,
    batchSize: 10,
    timeoutSeconds: 30,
    table: 'none',
    needs: ['support:webhook'],
    // a connector request is rare and waits for a person: two at once are plenty
    maxConcurrency: 2,
  },
];

export const integrationSchedules: Schedule[] = [
  // Every minute, the http_json sources due by then onto the sync queue (one message per run; the worker charges
  // and fetches). Its one table grant is a Query of the due index's partitions (SYNCDUE#<shard> on GSI1): the only
  // cross-tenant read in the service, and it sees tenant, source and due time only (sync-due.ts).
  {
    name: 'DataSourceSweep',
    handler: 'functions/workers/data-source-sweep.ts',
    description: 'Data-source schedule: due http_json sources onto the data-source-syncs queue, every minute',
    everyMinutes: 1,
    timeoutSeconds: 60,
    reads: { index: 'GSI1', leadingKeyPrefix: duePartitionPrefix },
    sendsTo: [DATA_SOURCE_SYNC_QUEUE],
    missedRun:
      'A missed sweep loses nothing: it carries no data, and the next minute’s sweep reads the same due index (unchanged until a sync is logged) and sends the same sources; a dead-letter queue would hold only empty schedule events.',
    localEveryMsEnv: 'DATA_SOURCE_SWEEP_MS',
  },
];
