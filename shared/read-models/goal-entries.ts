import { createHash } from 'node:crypto';
import { keys } from '#shared/db/keys.ts';
import { goalAcl, goalState, type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';

/**
 * The goal read models (docs/data-model.md, "Read models"), as pure functions of one goal record.
 *
 * Each goal that is not discarded has a few read-model entries in its own partition (`RM#<name>`), each
 * indexed on GSI1 under a composite list the store's entries cannot give (an item has one GSI1 key):
 *  - `RM#status`         → `<kind>@rm_status#<status>#<shard 0-1>`      status alone (sharded: every status change of the kind)
 *  - `RM#period`         → `<kind>@rm_period_status#<period>#<status>`  status within a period
 *  - `RM#owner#<user>`   → `<kind>@rm_owner_status#<user>#<status>`     an owner's goals with a status
 *  - `RM#label#<label>`  → `<kind>@rm_label_status#<label>#<status>`
 *  - `RM#team#<team>`    → `<kind>@rm_team_status#<team>#<status>`
 *  - `RM#checkin`        → `<kind>@rm_checkin#0`, sort key `<last_checkin_date|~>#<created_at>#<id>`
 *    (last check-in date order, earliest first)
 *  - `RM#checkin_desc`   → `<kind>@rm_checkin_desc#0`, sort key `<inverted last_checkin_date|~>#<created_at>#<id>`
 *    (latest first: read forwards, so never-checked-in goals still come last and ties stay in creation order,
 *    contract 4; reading the earliest-first order backwards would put both the other way round)
 * and counts along the dimensions it names (`dims`): an exact counter per dimension is the number of
 * entries naming it, kept in the same transaction as the entry (goal-sync.ts). The status entry also counts
 * the goal in its creation-time bucket (`created:<bucket>`): the page anchors (page-anchors.ts).
 */

export const STATUS_SHARDS = 2;
/**
 * Partitions of the last-check-in order. One: its first page is then one Query (a page of 20 reads ~1 RCU of
 * keys; every shard adds at least 0.5 RCU to every read of it, 16 shards 8 RCU). An entry moves only when its
 * goal's last check-in DATE changes (at most once per goal and day), two index writes a move, so one partition
 * takes ~500 moves/s of a kind; raise it for a tenant that checks in more distinct goals a second than that
 * (the engine merges shards; readers need the read models rebuilt: READ_MODELS_VERSION).
 */
export const CHECKIN_SHARDS = 1;
/**
 * The read models' layout version: the readiness marker names the version it was built at, and what a version
 * added is planned from only when the tenant's marker is at least that version (2: page anchors, the one-partition
 * last-check-in order; 3: the latest-first last-check-in order). A new tenant is marked at the current version;
 * an older one by the backfill.
 */
export const READ_MODELS_VERSION = 3;
/**
 * Each counter is split over this many items, so no counter item takes a large tenant's whole write rate. The
 * change stream adds a goal to the first STREAM_COUNTER_SHARDS (by its uuid); the backfill's workers each to
 * one of the others, so a backfill running beside the stream never contends with it for a counter item.
 */
export const COUNTER_SHARDS = 4;
export const STREAM_COUNTER_SHARDS = 2;
/** The sort key value of a goal never checked in: after every date (and every inverted date), so both orders list them last. */
export const NEVER_CHECKED_IN = '~';

/** The creation-time bucket of a goal for the page anchors: its `created_at` to the tenth of a second (a prefix of its list sort key). */
export const createdBucket = (createdAt: string) => createdAt.slice(0, 21);
const CREATED = 'created:';

/** The read-model dimensions a list filter can be counted on. */
export const dim = {
  all: 'all',
  /** The goals created within one bucket: a page anchor, not a counter of a filter. */
  created: (bucket: string) => `${CREATED}${bucket}`,
  status: (s: string) => `status:${s}`,
  period: (p: string) => `period:${p}`,
  periodStatus: (p: string, s: string) => `period:${p}|status:${s}`,
  owner: (u: string) => `owner:${u}`,
  ownerStatus: (u: string, s: string) => `owner:${u}|status:${s}`,
  label: (l: string) => `label:${l}`,
  labelStatus: (l: string, s: string) => `label:${l}|status:${s}`,
  team: (t: string) => `team:${t}`,
  teamStatus: (t: string, s: string) => `team:${t}|status:${s}`,
};

/** The composite lists (GSI1 entry-list names under the goal's kind). */
export const RM_LIST = {
  status: 'rm_status',
  periodStatus: 'rm_period_status',
  ownerStatus: 'rm_owner_status',
  labelStatus: 'rm_label_status',
  teamStatus: 'rm_team_status',
  checkin: 'rm_checkin',
  checkinDesc: 'rm_checkin_desc',
} as const;

/** A stable small number from a goal uuid (its last hex digits), so one goal always lands on the same shard. */
export function shardOf(uuid: string, shards: number): number {
  const tail = /^[0-9a-f]{4}$/i.test(uuid.slice(-4))
    ? parseInt(uuid.slice(-4), 16)
    : createHash('sha1').update(uuid).digest().readUInt16BE(0);
  return tail % shards;
}

/** One desired read-model entry: where it is indexed, what it counts, and its list envelope. */
export interface ReadModelEntry {
  /** `RM#...` sort key in the goal's partition. */
  sk: string;
  gsiPk: string;
  gsiSk: string;
  /** Counter dimensions this entry adds one to. */
  dims: string[];
  /** The goal is limited (counters keep the limited share apart: exact for a caller only when it is 0). */
  limited: boolean;
  vis: string;
  acl?: string[];
  state?: string;
}

/** What an entry is, in one string: two entries with the same fingerprint need no write. */
export const fingerprint = (e: Pick<ReadModelEntry, 'gsiPk' | 'gsiSk' | 'dims' | 'limited' | 'vis' | 'acl' | 'state'>) =>
  JSON.stringify([e.gsiPk, e.gsiSk, e.dims, e.limited, e.vis, e.acl ?? null, e.state ?? null]);

/** Where one shard of a dimension's count is kept: a counter item, or for a creation bucket the kind's page-anchor partition. */
export const counterKey = (tenantId: string, kind: GoalKind, d: string, shard: number) =>
  d.startsWith(CREATED) ? keys.goalAnchor(tenantId, kind, d.slice(CREATED.length), shard) : keys.goalCounter(tenantId, kind, d, shard);

/** The partition of one value of a composite list of a kind. */
export const rmPartition = (tenantId: string, kind: GoalKind, list: string, value: string) => keys.entryList(tenantId, kind, list, value);

export const checkinSortKey = (g: Pick<GoalRecord, 'last_checkin_date' | 'created_at' | 'uuid'>) =>
  `${g.last_checkin_date ?? NEVER_CHECKED_IN}#${keys.listSortKey(g.created_at, g.uuid)}`;

/** A YYYY-MM-DD date whose code-unit order is the dates' reverse: each digit d becomes 9 - d. */
export const invertDate = (date: string) => date.replace(/\d/g, (d) => String(9 - Number(d)));

/** The latest-first order's sort key: inverted date (an involution: inverting it again gives the date back), then creation. */
export const checkinDescSortKey = (g: Pick<GoalRecord, 'last_checkin_date' | 'created_at' | 'uuid'>) =>
  `${g.last_checkin_date ? invertDate(g.last_checkin_date) : NEVER_CHECKED_IN}#${keys.listSortKey(g.created_at, g.uuid)}`;

/** The entries a goal should have now (none when it is discarded or gone). */
export function desiredEntries(tenantId: string, g: GoalRecord | undefined): ReadModelEntry[] {
  if (!g || goalState(g) === 'discarded') return [];
  const s = g.current_status;
  const limited = g.visibility === 'limited';
  const env = { limited, vis: g.visibility, ...(limited ? { acl: goalAcl(g) } : {}), ...(goalState(g) ? { state: goalState(g) } : {}) };
  const created = keys.listSortKey(g.created_at, g.uuid);
  const part = (list: string, value: string) => rmPartition(tenantId, g.type, list, value);
  const out: ReadModelEntry[] = [
    {
      sk: 'status',
      gsiPk: part(RM_LIST.status, `${s}#${shardOf(g.uuid, STATUS_SHARDS)}`),
      gsiSk: created,
      dims: [dim.all, dim.status(s), dim.created(createdBucket(g.created_at))],
      ...env,
    },
    {
      sk: 'period',
      gsiPk: part(RM_LIST.periodStatus, `${g.time_period_uuid}#${s}`),
      gsiSk: created,
      dims: [dim.period(g.time_period_uuid), dim.periodStatus(g.time_period_uuid, s)],
      ...env,
    },
    { sk: 'checkin', gsiPk: part(RM_LIST.checkin, String(shardOf(g.uuid, CHECKIN_SHARDS))), gsiSk: checkinSortKey(g), dims: [], ...env },
    {
      sk: 'checkin_desc',
      gsiPk: part(RM_LIST.checkinDesc, String(shardOf(g.uuid, CHECKIN_SHARDS))),
      gsiSk: checkinDescSortKey(g),
      dims: [],
      ...env,
    },
  ];
  for (const u of new Set(g.owner_uuids))
    out.push({
      sk: `owner#${u}`,
      gsiPk: part(RM_LIST.ownerStatus, `${u}#${s}`),
      gsiSk: created,
      dims: [dim.owner(u), dim.ownerStatus(u, s)],
      ...env,
    });
  for (const l of new Set(g.label_uuids))
    out.push({
      sk: `label#${l}`,
      gsiPk: part(RM_LIST.labelStatus, `${l}#${s}`),
      gsiSk: created,
      dims: [dim.label(l), dim.labelStatus(l, s)],
      ...env,
    });
  for (const t of new Set(g.team_uuids))
    out.push({
      sk: `team#${t}`,
      gsiPk: part(RM_LIST.teamStatus, `${t}#${s}`),
      gsiSk: created,
      dims: [dim.team(t), dim.teamStatus(t, s)],
      ...env,
    });
  return out;
}

/**
 * The entries a goal's create writes with the goal (read-your-writes): those that count nothing, i.e. the
 * last-check-in orders'. A new goal is then in the order from its commit on, whenever the stream gets to it;
 * entries with counters stay the stream's, since a counter must move in the transaction of its entry.
 */
export const entriesWrittenAtCreate = (tenantId: string, g: GoalRecord): ReadModelEntry[] =>
  desiredEntries(tenantId, g).filter((e) => e.dims.length === 0);

/** The entry as stored (what sync reads back). */
export interface StoredEntry {
  sk: string;
  fp: string;
  dims: string[];
  limited: boolean;
}

/** Counter changes per dimension (`n`: goals, `nl`: limited goals) from replacing `before` by `after` (either may be absent). */
export function counterDelta(
  before: Pick<StoredEntry, 'dims' | 'limited'> | undefined,
  after: Pick<ReadModelEntry, 'dims' | 'limited'> | undefined,
): Map<string, { n: number; nl: number }> {
  const out = new Map<string, { n: number; nl: number }>();
  const bump = (d: string, n: number, nl: number) => {
    const cur = out.get(d) ?? { n: 0, nl: 0 };
    out.set(d, { n: cur.n + n, nl: cur.nl + nl });
  };
  for (const d of before?.dims ?? []) bump(d, -1, before!.limited ? -1 : 0);
  for (const d of after?.dims ?? []) bump(d, 1, after!.limited ? 1 : 0);
  for (const [d, v] of out) if (v.n === 0 && v.nl === 0) out.delete(d);
  return out;
}
