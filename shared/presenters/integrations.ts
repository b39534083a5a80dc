/** Integrations presentation, above the domain: data sources and connector requests, typed by their response schemas. */
import type { z } from 'zod';
import type { ConnectorRequestRecord, DataSourceRecord, DataSourceSyncRecord } from '#shared/domain/integrations/entity.ts';
import type {
  ConnectorRequestRecordSchema,
  DataSourceCreatedRecordSchema,
  DataSourceRecordSchema,
  DataSourceSyncRecordSchema,
} from '#shared/schemas/integrations.ts';

type Wire<S extends z.ZodType> = z.infer<S>;

/**
 * The config as shown: an http_json source's always lists the header names it keeps (`header_names`, sorted,
 * [] when none: contract 19), never their values, which are not in it.
 */
const presentedConfig = (d: DataSourceRecord): Record<string, unknown> => {
  if (d.kind !== 'http_json') return d.config;
  const names = d.config.header_names;
  return { ...d.config, header_names: Array.isArray(names) ? names.map(String).sort() : [] };
};

export const presentDataSource = (d: DataSourceRecord): Wire<typeof DataSourceRecordSchema> => ({
  uuid: d.uuid,
  goal_uuid: d.goal_uuid,
  name: d.name,
  kind: d.kind,
  config: presentedConfig(d),
  creator_uuid: d.creator_uuid,
  status: d.status ?? 'active',
  last_synced_at: d.last_synced_at ?? null,
  last_value: d.last_value ?? null,
  last_error: d.last_error ?? null,
  created_at: d.created_at,
  updated_at: d.updated_at,
});

/** The create's answer: a push source's secret appears here only. */
export const presentCreatedDataSource = (
  d: DataSourceRecord,
  pushSecret: string | undefined,
): Wire<typeof DataSourceCreatedRecordSchema> => ({
  ...presentDataSource(d),
  ...(pushSecret ? { push_secret: pushSecret } : {}),
});

export const presentDataSourceSync = (s: DataSourceSyncRecord): Wire<typeof DataSourceSyncRecordSchema> => ({
  uuid: s.uuid,
  at: s.at,
  trigger: s.trigger,
  status: s.status,
  value: s.value,
  error: s.error,
  checkin_uuid: s.checkin_uuid,
});

export const presentConnectorRequest = (r: ConnectorRequestRecord): Wire<typeof ConnectorRequestRecordSchema> => ({
  uuid: r.uuid,
  connection_type: r.connection_type,
  normalized_key: r.normalized_key,
  connector_display_name: r.connector_display_name,
  request_source: r.request_source,
  requested_by_uuids: r.requested_by_uuids,
  request_count: r.request_count,
  created_at: r.created_at,
  updated_at: r.updated_at,
});
