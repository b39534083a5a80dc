/**
 * Integrations (connector requests, data sources): the rules of each command as pure functions (no I/O, no
 * clock, no id generation). connector-requests.ts and data-sources.ts read, call these, and write once.
 *
 * Connector requests (the spec leaves them open; the OpenAPI descriptions say the same):
 *  - One record per connector and tenant, identified by the normalized name (case-insensitive, whitespace
 *    collapsed). The first request fixes connection_type, connector_display_name and request_source;
 *    later requests only add their requester.
 *  - Idempotent per requester: asking again for a connector one already asked for changes nothing and
 *    raises no second support issue. request_count counts distinct requesters.
 *  - Every member (viewers included, contract section 5) may request; only admins list the requests.
 *
 * Data sources (contract section 8 adds the create; the spec only reads):
 *  - A data source belongs to one goal (any kind); creating one is a change of the goal (permission checked
 *    by the goal's own rules). A deleted (discarded) or archived goal is frozen and takes no new data source.
 *  - The goal's data_sources_count moves with the data source's creation.
 *  - config is opaque, but not a vault: it is returned to everyone who can see the goal, so keys that name
 *    a credential are refused (422) rather than stored in clear and shown to the tenant.
 */
import type { Caller } from '#shared/auth/caller.ts';
import { goalEditRefusal, type GoalAccess } from '#shared/domain/goals/access.ts';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import {
  collapseWhitespace,
  connectorRequestUuid,
  normalizeConnectionType,
  REQUESTERS_LISTED,
  type ConnectorRequesterItem,
  type ConnectorRequestRecord,
  type DataSourceRecord,
  type RequestSource,
} from '#shared/domain/integrations/entity.ts';
import { nextRunAt } from '#shared/domain/integrations/sync-rules.ts';
import { accept, refuse, type Decision } from '#shared/decision.ts';
import { ValidationError, type AppError } from '#shared/errors.ts';

export interface ConnectorRequestCommand {
  connection_type: string;
  connector_display_name?: string | null;
  request_source?: RequestSource | null;
}

export interface DataSourceCommand {
  goal_uuid: string;
  name: string;
  kind: string;
  config?: Record<string, unknown>;
}

/** The connector named by a command: its record's uuid (derived, so the key is the uniqueness check) and names. */
export function connectorOf(tenantId: string, cmd: ConnectorRequestCommand) {
  const connectionType = collapseWhitespace(cmd.connection_type);
  const normalizedKey = normalizeConnectionType(connectionType);
  return { uuid: connectorRequestUuid(tenantId, normalizedKey), connectionType, normalizedKey };
}

export interface ConnectorRequestChange {
  /** The record to write: created when `current` was absent, else `current` with the caller added. */
  record: ConnectorRequestRecord;
  created: boolean;
  /** The caller's requester item, claimed in the same write (its failed claim means a repeat). */
  requester: ConnectorRequesterItem;
}

/** The caller's request on top of the record as read (undefined: the first request for this connector). Never refused: every member may request. */
export function decideConnectorRequest(
  caller: Caller,
  tenantId: string,
  cmd: ConnectorRequestCommand,
  current: ConnectorRequestRecord | undefined,
  now: string,
): Decision<ConnectorRequestChange> {
  const me = caller.userId;
  const requester: ConnectorRequesterItem = { user_uuid: me, requested_at: now, request_source: cmd.request_source ?? null };
  if (current) {
    const listed = current.requested_by_uuids;
    const record = {
      ...current,
      requested_by_uuids: listed.length < REQUESTERS_LISTED ? [...listed, me] : listed,
      request_count: current.request_count + 1,
      updated_at: now,
    };
    return accept({ record, created: false, requester });
  }
  const { uuid, connectionType, normalizedKey } = connectorOf(tenantId, cmd);
  const record: ConnectorRequestRecord = {
    uuid,
    connection_type: connectionType,
    normalized_key: normalizedKey,
    connector_display_name: collapseWhitespace(cmd.connector_display_name ?? '') || connectionType,
    request_source: cmd.request_source ?? null,
    requested_by_uuids: [me],
    request_count: 1,
    created_at: now,
    updated_at: now,
  };
  return accept({ record, created: true, requester });
}

const CREDENTIAL_KEY = /password|passwd|secret|token|apikey|privatekey|credential|authorization|cookie/;

/** Dotted paths of config keys that look like credentials (key compared lower-cased, without separators). */
export function credentialPaths(value: unknown, path = 'config'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => credentialPaths(v, `${path}.${i}`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) =>
    CREDENTIAL_KEY.test(k.toLowerCase().replace(/[^a-z0-9]/g, '')) ? [`${path}.${k}`] : credentialPaths(v, `${path}.${k}`),
  );
}

/**
 * Refused before anything is read (a create's precheck): a config carrying credentials. An http_json
 * source's `headers` are where its credentials belong: their values are sealed and never shown.
 */
export function dataSourceConfigRefusal(
  cmd: Pick<DataSourceCommand, 'kind' | 'config'> & Partial<DataSourceCommand>,
): AppError | undefined {
  const shown = cmd.kind === 'http_json' && cmd.config ? { ...cmd.config, headers: undefined } : cmd.config;
  const secrets = credentialPaths(shown);
  if (!secrets.length) return undefined;
  return new ValidationError(
    'config must not carry credentials: it is shown to everyone who can see the goal',
    secrets.map((field) => ({ field, code: 'credential_not_allowed', message: `${field} looks like a credential` })),
  );
}

/** What a synced kind stores beside the record: its config as shown, sealed header values, the push secret's hash. */
export interface SyncSettings {
  config: Record<string, unknown>;
  headers_sealed?: string | null;
  push_secret_hash?: string | null;
}

/** The data source record, fixed before any read so every retry writes the same one. An http_json source is first due one period after its creation. */
export function newDataSource(caller: Caller, cmd: DataSourceCommand, now: string, uuid: string, sync?: SyncSettings): DataSourceRecord {
  const record: DataSourceRecord = {
    uuid,
    goal_uuid: cmd.goal_uuid.toLowerCase(),
    name: cmd.name,
    kind: cmd.kind,
    config: sync?.config ?? cmd.config ?? {},
    creator_uuid: caller.userId,
    status: 'active',
    last_synced_at: null,
    last_value: null,
    last_error: null,
    failures: 0,
    ...(sync?.headers_sealed ? { headers_sealed: sync.headers_sealed } : {}),
    ...(sync?.push_secret_hash ? { push_secret_hash: sync.push_secret_hash } : {}),
    created_at: now,
    updated_at: now,
  };
  return { ...record, next_run_at: nextRunAt(record, now) };
}

/** The goal (editable by the caller: checked by the goal's rules) with one more data source; a frozen goal takes none. */
export function attachDataSource(goal: GoalRecord, now: string): Decision<GoalRecord> {
  if (goal.discarded_at)
    return refuse(ValidationError.field('goal_uuid', 'discarded', 'This goal is deleted; it takes no new data source'));
  if (goal.archived_at) return refuse(ValidationError.field('goal_uuid', 'archived', 'This goal is archived; it takes no new data source'));
  return accept({ ...goal, data_sources_count: (goal.data_sources_count ?? 0) + 1, updated_at: now });
}

/** A data source create once its goal is read (undefined: unknown) with the caller's access: the goal's edit refusal (`hidden` for one it cannot see), then attachDataSource. */
export function decideCreateDataSource(
  goal: GoalRecord | undefined,
  access: GoalAccess | undefined,
  now: string,
  hidden: () => AppError,
): Decision<GoalRecord> {
  if (!goal || !access) return refuse(hidden());
  const refusal = goalEditRefusal(access, hidden);
  return refusal ? refuse(refusal) : attachDataSource(goal, now);
}
