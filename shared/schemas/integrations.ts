import * as z from 'zod';
import { requestSource } from '#shared/schemas/bodies/connector-request-create.ts';
import { listEnvelope, recordEnvelope } from '#shared/schemas/common.ts';
import { DATA_SOURCE_STATUSES, SYNC_STATUSES, SYNC_TRIGGERS } from '#shared/domain/integrations/entity.ts';

/** The integration bodies are built in shared/schemas/bodies/ (a handler loads its own on first use); re-exported for the route table. */
export { ConnectorRequestCreateBody } from '#shared/schemas/bodies/connector-request-create.ts';
export { DataSourceCreateBody } from '#shared/schemas/bodies/data-source-create.ts';

// ---------- connector requests (spec: application endpoints) ----------

export const ConnectorRequestRecordSchema = z
  .object({
    uuid: z.string().meta({ description: 'Derived from the tenant and normalized_key: stable for a connector.' }),
    connection_type: z.string().meta({ description: 'As first requested (trimmed, whitespace collapsed).' }),
    normalized_key: z.string().meta({ description: 'connection_type lower-cased with whitespace collapsed: the identity of the request.' }),
    connector_display_name: z.string(),
    request_source: requestSource.nullable(),
    requested_by_uuids: z.array(z.string()).meta({ description: 'Distinct requesters in first-request order (the first 100).' }),
    request_count: z.number().int().meta({ description: 'Distinct requesters (all of them).' }),
    created_at: z.string().meta({ description: 'First request.' }),
    updated_at: z.string().meta({ description: 'Latest new requester.' }),
  })
  .meta({ id: 'ConnectorRequest' });

export const ConnectorRequestResponse = recordEnvelope('connector_request', ConnectorRequestRecordSchema);
export const ConnectorRequestListResponse = listEnvelope('connector_request', ConnectorRequestRecordSchema);

// ---------- data sources (extension, contract section 8) ----------

export const DataSourceRecordSchema = z
  .object({
    uuid: z.string(),
    goal_uuid: z.string(),
    name: z.string(),
    kind: z.string(),
    config: z.record(z.string(), z.unknown()).meta({
      description:
        "As sent, except an http_json source's: header values are left out and header_names lists the names kept (sorted; [] when none), every_minutes filled in. Header values go only to the origin (scheme, host, port) of the url they were given with.",
    }),
    creator_uuid: z.string(),
    status: z.enum(DATA_SOURCE_STATUSES).meta({
      description: 'failing: 10 failed syncs in a row; tried hourly until one succeeds (then active). paused: no scheduled syncs.',
    }),
    last_synced_at: z.string().nullable(),
    last_value: z.number().nullable(),
    last_error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'DataSource' });

/** checks.can_update: the caller can update the goal (and so manage its data sources); access_source is the goal's. */
export const DataSourceResponse = recordEnvelope('data_source', DataSourceRecordSchema);

export const DataSourceCreatedRecordSchema = DataSourceRecordSchema.extend({
  push_secret: z
    .string()
    .optional()
    .meta({ description: 'push sources: the bearer secret of POST /data_sources/{id}/values, in this response only (a hash is stored).' }),
}).meta({ id: 'DataSourceCreated' });
export const DataSourceCreatedResponse = recordEnvelope('data_source', DataSourceCreatedRecordSchema);

export const DataSourceSyncRecordSchema = z
  .object({
    uuid: z.string(),
    at: z.string(),
    trigger: z.enum(SYNC_TRIGGERS),
    status: z.enum(SYNC_STATUSES).meta({ description: 'unchanged: the goal already held the value; nothing was written.' }),
    value: z.number().nullable(),
    error: z.string().nullable(),
    checkin_uuid: z.string().nullable().meta({ description: 'The check-in written (succeeded), else null.' }),
  })
  .meta({ id: 'DataSourceSync' });
export const DataSourceSyncListResponse = listEnvelope('data_source_sync', DataSourceSyncRecordSchema);

export const DataSourceSyncQueuedResponse = z
  .object({
    data: z.object({
      type: z.literal('data_source_sync_run'),
      record: z.object({
        data_source_uuid: z.string(),
        run: z.string().meta({ description: 'Names the run; its attempt appears in GET /data_sources/{id}/syncs once done.' }),
        state: z.literal('queued'),
      }),
    }),
  })
  .meta({ id: 'DataSourceSyncQueuedResponse' });

export { DataSourceUpdateBody } from '#shared/schemas/bodies/data-source-update.ts';
export { DataSourcePushBody } from '#shared/schemas/bodies/data-source-push.ts';
