import { createHash } from 'node:crypto';
import { keys } from '#shared/db/keys.ts';
import { entryList } from '#shared/db/entry-lists.ts';
import { entry, type BaseRecord, type EntityDef } from '#shared/db/model.ts';

// ---------- connector requests ----------

export const REQUEST_SOURCES = ['catalog', 'by_name'] as const;
export type RequestSource = (typeof REQUEST_SOURCES)[number];

/**
 * Requesters listed on the record itself. The full set lives in one side item per requester (below), so a
 * connector that thousands of people ask for never pushes the record towards DynamoDB's 400 KB item limit.
 */
export const REQUESTERS_LISTED = 100;

/** One entry of the tenant's list of requested connections: one record per normalized connector name. */
export interface ConnectorRequestRecord extends BaseRecord {
  /** As first requested, trimmed and with whitespace runs collapsed (original case kept for display). */
  connection_type: string;
  /** The identity of the request: lower-cased, whitespace collapsed (see normalizeConnectionType). */
  normalized_key: string;
  connector_display_name: string;
  request_source: RequestSource | null;
  /** Distinct requesters in first-request order, the first REQUESTERS_LISTED of them. */
  requested_by_uuids: string[];
  /** Distinct requesters, all of them. */
  request_count: number;
}

/** Trims and collapses every whitespace run to one space (NFC first, so composed and decomposed accents are one text). */
export const collapseWhitespace = (s: string) => s.normalize('NFC').replace(/\s+/gu, ' ').trim();

/** The connector's identity: "  Sales   Force " and "sales force" are the same request. */
export const normalizeConnectionType = (s: string) => collapseWhitespace(s).toLowerCase();

// RFC 4122 name-based (v5) uuids under this namespace. Any fixed value works; it only must never change.
const CONNECTOR_NAMESPACE = Buffer.from('6f1c2a4e9b7d4c0e8a3f5d2b1e0c9a87', 'hex');

/**
 * The record's uuid is derived from (tenant, normalized key): the entity key itself is the uniqueness claim,
 * so two concurrent first requests race on one conditional put and exactly one creates the record. The
 * tenant is part of the name so that uuids stay globally unique across tenants.
 */
export function connectorRequestUuid(tenantId: string, normalizedKey: string): string {
  const hash = createHash('sha1').update(CONNECTOR_NAMESPACE).update(`${tenantId}\n${normalizedKey}`, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const h = hash.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export const connectorRequestEntity: EntityDef<ConnectorRequestRecord> = { type: 'connector_request' };

/**
 * Side item per (connector request, requester) in the record's own partition: the per-user idempotency
 * claim (a conditional put in the same transaction as the record) and the place that remembers when that
 * user asked and whether their support issue was handed to the queue.
 */
export const connectorRequesterKey = (tenantId: string, requestUuid: string, userUuid: string) =>
  keys.misc(tenantId, connectorRequestEntity.type, requestUuid, `requester#${userUuid}`);

export interface ConnectorRequesterItem {
  user_uuid: string;
  requested_at: string;
  request_source: RequestSource | null;
  /** Set once the support-issue message for this requester is on the queue. */
  issue_queued_at?: string;
}

// ---------- data sources ----------

export const DATA_SOURCE_STATUSES = ['active', 'paused', 'failing'] as const;
export type DataSourceStatus = (typeof DATA_SOURCE_STATUSES)[number];

/** Who created a data source: a user, or a service account (contract 17), whose uuid names no user. */
export type CreatorKind = 'user' | 'service_account';

/** A data source feeding a goal (contract sections 8 and 16). `config` is opaque for kinds the service does not sync. */
export interface DataSourceRecord extends BaseRecord {
  goal_uuid: string;
  name: string;
  kind: string;
  /** As presented: an http_json source's header values are not here (`headers_sealed`), only their names. */
  config: Record<string, unknown>;
  /** The user or service account its pushes and syncs write as (`creator_kind` says which). */
  creator_uuid: string;
  /**
   * Absent on records from before it was kept: read as a user (a source a service account created before then still
   * finds no user, and stays refused as a source whose creator left).
   */
  creator_kind?: CreatorKind;
  /** Absent on records from before sync: `active`. */
  status?: DataSourceStatus;
  last_synced_at?: string | null;
  last_value?: number | null;
  last_error?: string | null;
  /** Failed syncs in a row (10 make the source `failing`); 0 after a success. */
  failures?: number;
  /** http_json: the header values, sealed as webhook secrets are (secret-box), bound to the tenant, the source and headers_origin. */
  headers_sealed?: string | null;
  /**
   * http_json: the origin (scheme, host, port) of the URL the header values were given with, the only one they
   * are sent to (contract 19). Absent with values stored before it was kept: those are sent nowhere.
   */
  headers_origin?: string | null;
  /** push: SHA-256 of the push secret (hex); the secret itself is shown once, at creation. */
  push_secret_hash?: string | null;
  /** http_json: when the next scheduled sync is due (ISO), mirrored in the due-index item; null when paused. */
  next_run_at?: string | null;
}

/** The kind of a source's creator: a record from before the kind was kept names a user. */
export const creatorKindOf = (d: Pick<DataSourceRecord, 'creator_kind'>): CreatorKind => d.creator_kind ?? 'user';

/**
 * The scope a service account that creates a syncing source must hold, and must still hold for each push and sync:
 * what a source writes is a check-in of its goal, which `goals:write` allows (the check-in routes' scope).
 */
export const SOURCE_WRITE_SCOPE = 'goals:write';

/** A tenant's data sources at most (contract 19): the create past it is 422 too_many. */
export const MAX_DATA_SOURCES_PER_TENANT = 100;

/** "The data sources of goal G" is one Query (GSI1 `data_source@goal#<G>`), for goal pages and clean-ups. */
export const dataSourcesOfGoal = entryList('data_source', 'goal');

export const dataSourceEntity: EntityDef<DataSourceRecord> = {
  type: 'data_source',
  entries: (d) => [entry(dataSourcesOfGoal, d.goal_uuid)],
};

// ---------- syncs ----------

export const SYNC_TRIGGERS = ['schedule', 'manual', 'push'] as const;
export type SyncTrigger = (typeof SYNC_TRIGGERS)[number];
export const SYNC_STATUSES = ['succeeded', 'unchanged', 'failed'] as const;
export type SyncStatus = (typeof SYNC_STATUSES)[number];

/** One attempt of a source (its sync log, `GET /data_sources/{id}/syncs`). Its uuid is derived from the source and the run. */
export interface DataSourceSyncRecord extends BaseRecord {
  data_source_uuid: string;
  at: string;
  trigger: SyncTrigger;
  status: SyncStatus;
  value: number | null;
  error: string | null;
  checkin_uuid: string | null;
}

/** The sync log keeps 90 days (the table's TTL removes older attempts). */
export const SYNC_LOG_DAYS = 90;

export const dataSourceSyncEntity: EntityDef<DataSourceSyncRecord> = {
  type: 'data_source_sync',
  listName: (s) => `data_source_sync#${s.data_source_uuid}`,
  expiresAt: (s) => Math.floor(Date.parse(s.created_at) / 1000) + SYNC_LOG_DAYS * 86_400,
};

/** The queue between the schedule (and POST /sync) and the sync worker. */
export const DATA_SOURCE_SYNC_QUEUE = 'data-source-syncs';
/**
 * Sync worker invocations at once, across tenants (the event source's maximum concurrency, the worker row's
 * `maxConcurrency`): each takes a batch of up to 5 runs, so at most 25 fetches are in flight.
 */
export const DATA_SOURCE_SYNC_CONCURRENCY = 5;

/** What a sync message carries; the source itself is read by the worker. */
export interface SyncMessage {
  version: 1;
  tenant_uuid: string;
  data_source_uuid: string;
  /** Names the run: the due time of a scheduled run, a fresh id for a manual one. The check-in and sync ids derive from it. */
  run: string;
  trigger: 'schedule' | 'manual';
}

const SYNC_NAMESPACE = Buffer.from('3b8e0f6a51c94d27a1e2c7d90f4b6a13', 'hex');

/** A uuid (v5 layout) derived from the source, the run and what it names (`checkin`, `sync`): a repeated run names the same records. */
export function runUuid(dataSourceUuid: string, run: string, what: 'checkin' | 'sync'): string {
  const hash = createHash('sha1').update(SYNC_NAMESPACE).update(`${dataSourceUuid}\n${run}\n${what}`, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const h = hash.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
