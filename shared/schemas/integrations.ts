import * as z from 'zod';
import { requestSource } from '#shared/schemas/bodies/connector-request-create.ts';
import { listEnvelope, recordEnvelope } from '#shared/schemas/common.ts';

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
    config: z.record(z.string(), z.unknown()),
    creator_uuid: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'DataSource' });

/** checks.can_update: the caller can update the goal (and so manage its data sources); access_source is the goal's. */
export const DataSourceResponse = recordEnvelope('data_source', DataSourceRecordSchema);
