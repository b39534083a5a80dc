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
 *  - The goal's data_sources_count moves with the data source's creation; a tenant has at most
 *    MAX_DATA_SOURCES_PER_TENANT (100) of them, counted exactly (data-sources.ts) and refused past that (422 too_many).
 *  - An http_json source's header values go only to the origin they were given with (headersKept, sync-rules.ts).
 *  - config is opaque, but not a vault: it is returned to everyone who can see the goal, so keys that name
 *    a credential are refused (422) rather than stored in clear and shown to the tenant.
 */
import type { Caller } from '#shared/auth/caller.ts';
import { InsufficientScopeError } from '#shared/auth/scopes.ts';
import { goalEditRefusal, type GoalAccess } from '#shared/domain/goals/refusals.ts';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import {
  collapseWhitespace,
  connectorRequestUuid,
  normalizeConnectionType,
  REQUESTERS_LISTED,
  type ConnectorRequesterItem,
  type ConnectorRequestRecord,
  MAX_DATA_SOURCES_PER_TENANT,
  SOURCE_WRITE_SCOPE,
  type DataSourceRecord,
  type DataSourceStatus,
  type RequestSource,
} from '#shared/domain/integrations/entity.ts';
import { headersKept, nextRunAt, NO_HEADERS, type HeaderBinding } from '#shared/domain/integrations/sync-rules.ts';
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

/** The kinds whose source writes check-ins by itself (fetched or pushed), as its creator. */
const SYNCED_KINDS = new Set(['http_json', 'push']);

/**
 * Refused before anything is read (a create's precheck): a service account's token creating a source that writes
 * check-ins as the account (http_json, push) must itself hold the scope of that write (SOURCE_WRITE_SCOPE), so a
 * token narrowed to `data_sources` cannot make itself a way to write goals (403 insufficient_scope). A user's
 * token: its role decides, as for any goal change.
 */
export function sourceCreatorScopeRefusal(caller: Caller, kind: string): AppError | undefined {
  if (!caller.service || !SYNCED_KINDS.has(kind) || caller.scopes?.has(SOURCE_WRITE_SCOPE)) return undefined;
  return new InsufficientScopeError(SOURCE_WRITE_SCOPE);
}

/**
 * What a synced kind stores beside the record: its config as shown (http_json: without header_names), the header
 * values sent (sealed, bound to the config URL's origin; undefined when the command sent none), the push secret's hash.
 */
export interface SyncSettings {
  config: Record<string, unknown>;
  headers?: HeaderBinding;
  push_secret_hash?: string | null;
}

/** An http_json source's config and header fields under a header binding: `config.header_names` lists what is kept. */
const withHeaders = (config: Record<string, unknown>, b: HeaderBinding) => ({
  config: { ...config, header_names: b.header_names },
  headers_sealed: b.headers_sealed,
  headers_origin: b.headers_origin,
});

/** The data source record, fixed before any read so every retry writes the same one. An http_json source is first due one period after its creation. */
export function newDataSource(caller: Caller, cmd: DataSourceCommand, now: string, uuid: string, sync?: SyncSettings): DataSourceRecord {
  const record: DataSourceRecord = {
    uuid,
    goal_uuid: cmd.goal_uuid.toLowerCase(),
    name: cmd.name,
    kind: cmd.kind,
    config: sync?.config ?? cmd.config ?? {},
    creator_uuid: caller.userId,
    creator_kind: caller.service ? 'service_account' : 'user',
    status: 'active',
    last_synced_at: null,
    last_value: null,
    last_error: null,
    failures: 0,
    ...(cmd.kind === 'http_json' && sync ? withHeaders(sync.config, sync.headers ?? NO_HEADERS) : {}),
    ...(sync?.push_secret_hash ? { push_secret_hash: sync.push_secret_hash } : {}),
    created_at: now,
    updated_at: now,
  };
  return { ...record, next_run_at: nextRunAt(record, now) };
}

export interface DataSourceUpdateCommand {
  name?: string;
  config?: Record<string, unknown>;
  status?: 'active' | 'paused';
}

/**
 * The source after a PUT (the goal's edit permission checked before): name; config (http_json: `sync`, merged
 * with the stored config; header values sent replace the stored ones, else headersKept: kept on the same origin,
 * dropped when the URL moves to another); status active or paused, a change of which restarts the schedule
 * with its failures forgotten. A new period or status moves the next run; otherwise the schedule stays.
 */
export function updatedDataSource(
  cur: DataSourceRecord,
  input: DataSourceUpdateCommand,
  sync: SyncSettings | undefined,
  now: string,
): DataSourceRecord {
  const was: DataSourceStatus = cur.status ?? 'active';
  const status: DataSourceStatus = input.status ?? was;
  const restarted = input.status !== undefined && input.status !== was;
  const httpJson = cur.kind === 'http_json' && input.config !== undefined && sync !== undefined;
  const next: DataSourceRecord = {
    ...cur,
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.config !== undefined ? { config: sync?.config ?? input.config } : {}),
    ...(httpJson ? withHeaders(sync.config, sync.headers ?? headersKept(cur, String(sync.config.url))) : {}),
    status,
    ...(restarted ? { failures: 0 } : {}),
    updated_at: now,
  };
  const reschedule = restarted || (input.config !== undefined && cur.kind === 'http_json');
  return { ...next, next_run_at: reschedule ? nextRunAt(next, now) : (cur.next_run_at ?? null) };
}

/** A tenant's data sources are capped (contract 19): the create that would pass the cap is 422 `too_many`. */
export const tooManyDataSources = () =>
  new ValidationError(`A tenant has at most ${MAX_DATA_SOURCES_PER_TENANT} data sources: delete one to add another`, [
    { code: 'too_many', message: `at most ${MAX_DATA_SOURCES_PER_TENANT} data sources per tenant` },
  ]);

/** The goal (editable by the caller: checked by the goal's rules) with one more data source; a frozen goal takes none. */
export function attachDataSource(goal: GoalRecord, now: string): Decision<GoalRecord> {
  if (goal.discarded_at)
    return refuse(ValidationError.field('goal_uuid', 'discarded', 'This goal is deleted; it takes no new data source'));
  if (goal.archived_at) return refuse(ValidationError.field('goal_uuid', 'archived', 'This goal is archived; it takes no new data source'));
  return accept({ ...goal, data_sources_count: (goal.data_sources_count ?? 0) + 1, updated_at: now });
}

/**
 * A data source create once its goal is read (undefined: unknown) with the caller's access and the tenant's
 * count of data sources: the goal's edit refusal (`hidden` for one it cannot see), then attachDataSource, then
 * the tenant's cap.
 */
export function decideCreateDataSource(
  goal: GoalRecord | undefined,
  access: GoalAccess | undefined,
  tenantSources: number,
  now: string,
  hidden: () => AppError,
): Decision<GoalRecord> {
  if (!goal || !access) return refuse(hidden());
  const refusal = goalEditRefusal(access, hidden);
  if (refusal) return refuse(refusal);
  const attached = attachDataSource(goal, now);
  if ('error' in attached) return attached;
  return tenantSources >= MAX_DATA_SOURCES_PER_TENANT ? refuse(tooManyDataSources()) : attached;
}
