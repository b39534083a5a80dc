import { keys } from '#shared/db/keys.ts';
import { queryList } from '#shared/db/index-queries.ts';
import type { ListEntry } from '#shared/db/model.ts';
import {
  GOAL_STATUSES,
  goalsByLabel,
  goalsByOwner,
  goalsByTeam,
  goalsInPeriod,
  type GoalKind,
  type GoalRecord,
} from '#shared/domain/goals/entity.ts';
import { labelEntity } from '#shared/domain/labels/entity.ts';
import { EARLY_KEYS } from '#shared/list/engine.ts';
import type { IndexEnv, KeyPosition, ListPlan, ListQuery } from '#shared/list/resource.ts';
import type { ParsedFilter } from '#shared/list/filter.ts';
import {
  CHECKIN_SHARDS,
  createdBucket,
  dim,
  invertDate,
  NEVER_CHECKED_IN,
  READ_MODELS_VERSION,
  rmPartition,
  RM_LIST,
  STATUS_SHARDS,
} from '#shared/read-models/goal-entries.ts';
import { knownReadiness, readGoalStats, type GoalStats } from '#shared/read-models/goal-sync.ts';
import {
  bucketEnd,
  bucketStart,
  placePage,
  placePageNewestFirst,
  readAnchors,
  SETTLE_MS,
  type Anchor,
} from '#shared/read-models/page-anchors.ts';

/**
 * The goal lists' planner over the read models (docs/architecture.md, "Filters"). It reads the tenant's
 * readiness and the counters of every candidate in one batch, then serves the list from the candidate that
 * holds the fewest goals:
 *  - an association's own entry list (period, owner, label, team): written with the goal, read-your-writes;
 *  - a composite read-model list (status within a period, an owner's/label's/team's goals with a status,
 *    status alone) or the last-check-in order, kept by the change stream;
 *  - the kind's whole list.
 * A read-model list lags the table by the stream's delay, so what it serves is re-checked on the goals read
 * (filters, and that the goal is listed at all: not discarded, visible to the caller), and it is chosen only
 * when it holds more than NEAR goals fewer than the best exact alternative: a list read exactly shows a client
 * its own writes at once. When only one candidate exists, its keys are read while the counters are (a count).
 * `count` comes from the counters when they are exact for the query and the caller (no residual filter, no
 * goal counted twice, and the caller sees every goal they count); otherwise the engine walks.
 * A deep page of the whole list in creation order, oldest or newest first, starts at its page anchor
 * (page-anchors.ts); the whole list in last-check-in order is the order's read model, taken on trust while the
 * readiness is read.
 */
export const SMALL = 1000;
/** An exact list this much larger than the smallest read-model list (or this small) is still read instead of it. */
const NEAR = 10;

/** Attributes whose own index is more selective than any read model (one goal, a parent's children, a subtree, a delegate's). */
const STRONGER = new Set(['uuid', 'short_id', 'links_as_child_ancestor_uuid', 'links_as_child_uuid', 'delegates_uuid', 'ancestors_uuid']);
/** Most owners/labels/teams/periods or statuses an `in` may name for the planner to estimate it (each value is one counter). */
const MAX_ESTIMATED_VALUES = 10;

type Assoc = 'period' | 'owner' | 'label' | 'team';
const ASSOC_ATTR: Record<Assoc, string> = { period: 'time_period_uuid', owner: 'owners_uuid', label: 'labels_uuid', team: 'teams_uuid' };
const ASSOC_DIMS: Record<Assoc, { alone: (v: string) => string; withStatus: (v: string, s: string) => string; list: string }> = {
  period: { alone: dim.period, withStatus: dim.periodStatus, list: RM_LIST.periodStatus },
  owner: { alone: dim.owner, withStatus: dim.ownerStatus, list: RM_LIST.ownerStatus },
  label: { alone: dim.label, withStatus: dim.labelStatus, list: RM_LIST.labelStatus },
  team: { alone: dim.team, withStatus: dim.teamStatus, list: RM_LIST.teamStatus },
};
const ASSOC_FIELD: Record<Assoc, (g: GoalRecord) => string[]> = {
  period: (g) => [g.time_period_uuid],
  owner: (g) => g.owner_uuids,
  label: (g) => g.label_uuids,
  team: (g) => g.team_uuids,
};
const ASSOC_LIST = { period: goalsInPeriod, owner: goalsByOwner, label: goalsByLabel, team: goalsByTeam } as const;

const isSet = (f: ParsedFilter) => f.predicate === 'eq' || f.predicate === 'in';
const valuesOf = (f: ParsedFilter) => (f.predicate === 'in' ? (f.value as string[]) : [f.value as string]).map(String);

interface Candidate {
  /** Exact for read-your-writes (an entry list written with the goal) or kept by the stream. */
  exact: boolean;
  /** Dimensions whose counts add up to the goals it holds. */
  dims: string[];
  /** The counts add up without counting a goal twice (single-valued dimensions, or one value). */
  countable: boolean;
  served: ParsedFilter[];
  partitions: string[];
  verify?: (g: GoalRecord) => boolean;
}

export interface GoalPlanInput {
  kind: GoalKind;
  /** The caller sees every goal (admin): counters of limited goals hold for it too. Known once the caller is. */
  seesAll: Promise<boolean>;
  /** The goal is listed for the caller (not discarded, visible): re-checked on goals a read model served. Called after the gate. */
  listed(g: GoalRecord): boolean;
}

/** A last-check-in order's key (`<date or ~>#<created_at>#<uuid>`) as a position in the list's order, and back. */
const checkinPositionOf = (date: (d: string) => string): KeyPosition => ({
  of: (sortKey) => {
    const at = sortKey.indexOf('#');
    const d = sortKey.slice(0, at);
    return { v: d === NEVER_CHECKED_IN ? null : date(d), k: sortKey.slice(at + 1) };
  },
  key: (p) => `${typeof p.v === 'string' ? date(p.v) : NEVER_CHECKED_IN}#${p.k}`,
});
const checkinPosition = checkinPositionOf((d) => d);
/** The latest-first order's: its dates inverted (invertDate is its own inverse). */
const checkinDescPosition = checkinPositionOf(invertDate);

/** Skips from which a page of the whole list is placed by its page anchor rather than by walking keys. */
export const ANCHORED_SKIP = EARLY_KEYS;

/** What the planner reads (replaced in unit tests), and the time. */
export interface PlanReads {
  stats(dims: string[]): Promise<GoalStats>;
  /** The read models' version this container already knows the tenant is ready at (0: read the marker). */
  known: number;
  /** Oldest first, or newest first counting only buckets before `newestFirst.below` (readAnchors). */
  anchors(skip: number, newestFirst?: { below: string }): Promise<Anchor[]>;
  /** The kind's list entries created from bucket `since` on (oldest first), or undefined when more than `atMost`. */
  recent(since: string, atMost: number): Promise<ListEntry[] | undefined>;
  now: number;
}

/** The read models' version that brought the page anchors (a tenant at it pages deeply from them). */
const ANCHORS_VERSION = 2;

/** Whether the tenant's read models are at `version` (READ_MODELS_VERSION): known, or read (with the counters of `dims`). */
const atVersion = (reads: PlanReads, read?: Promise<GoalStats>, version = READ_MODELS_VERSION) =>
  reads.known >= version ? Promise.resolve(true) : (read ?? reads.stats([])).then((st) => st.version >= version);

/** The goal list's plan from its read models, or undefined to let the engine take its generic plan. */
export async function planGoalList(
  input: GoalPlanInput,
  query: ListQuery,
  reads: PlanReads = defaultReads(input.kind, query.env),
): Promise<ListPlan<GoalRecord> | undefined> {
  const { kind, seesAll, listed } = input;
  const { stats } = reads;
  const { filters, sort, page, env } = query;
  if (filters.some((f) => f.attribute === 'discarded_at')) return undefined; // discarded goals have no read models
  if (filters.some((f) => isSet(f) && STRONGER.has(f.attribute))) return undefined;
  const byCheckin = sort?.attribute === 'last_checkin_date';
  const statusFilter = filters.find((f) => isSet(f) && (f.attribute === 'current_status' || f.attribute === 'status'));
  const assocs = (Object.keys(ASSOC_ATTR) as Assoc[]).flatMap((a) => {
    const f = filters.find((x) => isSet(x) && x.attribute === ASSOC_ATTR[a]);
    return f && valuesOf(f).length <= MAX_ESTIMATED_VALUES ? [{ a, f }] : [];
  });
  const skip = (page.page - 1) * page.perPage + page.offset;
  const whole = filters.length === 0;
  const creationOrder = !sort || sort.attribute === 'created_at';
  if (whole && creationOrder && !page.count && skip >= ANCHORED_SKIP)
    return anchoredPage(input, env, skip, reads, sort?.direction === 'desc');
  if (!statusFilter && assocs.length === 0 && !byCheckin && !(page.count && whole)) return undefined;
  if (statusFilter && valuesOf(statusFilter).length > GOAL_STATUSES.length) return undefined;
  if (whole && !byCheckin) {
    // the whole list counted: its first page is read while the counter is
    const count = Promise.all([stats([dim.all]), seesAll]).then(([st, all]) => {
      const c = st.count(dim.all);
      return st.ready && (all || c.nl === 0) && c.n > SMALL ? c.n : undefined;
    });
    return { source: { partitions: [keys.entityList(env.ctx.tenantId, kind)] }, served: [], count };
  }
  const part = (list: string, value: string) => rmPartition(env.ctx.tenantId, kind, list, value);
  /**
   * The goals in last-check-in order, from the order's read model (every filter checked on the goals read): each
   * direction has its own, read forwards, so never-checked-in goals come last and ties in creation order both ways.
   */
  const checkinOrder = () => {
    const desc = sort!.direction === 'desc';
    const list = desc ? RM_LIST.checkinDesc : RM_LIST.checkin;
    return {
      source: { partitions: Array.from({ length: CHECKIN_SHARDS }, (_, n) => part(list, String(n))) },
      served: [],
      ordered: true,
      verify: listed,
      position: desc ? checkinDescPosition : checkinPosition,
      readModel: ['order' as const],
    };
  };
  if (whole) {
    // the whole list in last-check-in order: the order's read model, read while the readiness is (else the generic plan)
    const reading = page.count ? stats([dim.all]) : undefined;
    const ready = atVersion(reads, reading);
    const count =
      reading &&
      Promise.all([reading, seesAll]).then(([st, all]) =>
        (all || st.count(dim.all).nl === 0) && st.count(dim.all).n > SMALL ? st.count(dim.all).n : undefined,
      );
    return {
      ...checkinOrder(),
      valid: ready,
      ...(count ? { count } : {}),
    };
  }

  const statuses = statusFilter
    ? [...new Set(valuesOf(statusFilter).map((s) => s.toLowerCase()))].filter((s) => (GOAL_STATUSES as readonly string[]).includes(s))
    : [];
  const values = new Map<Assoc, string[]>();
  for (const { a, f } of assocs) values.set(a, a === 'label' ? await existingLabels(env, valuesOf(f)) : valuesOf(f));

  // Only candidates that can win are estimated (each dimension read costs up to COUNTER_SHARDS items): an
  // association's list holds no more than the whole list, a composite no more than status alone.
  const candidates: Candidate[] =
    assocs.length === 0
      ? [{ exact: true, dims: [dim.all], countable: true, served: [], partitions: [keys.entityList(env.ctx.tenantId, kind)] }]
      : [];
  if (statusFilter && assocs.length === 0) {
    candidates.push({
      exact: false,
      dims: statuses.map(dim.status),
      countable: true,
      served: [statusFilter],
      partitions: statuses.flatMap((s) => Array.from({ length: STATUS_SHARDS }, (_, n) => part(RM_LIST.status, `${s}#${n}`))),
      verify: (g) => statuses.includes(g.current_status) && listed(g),
    });
  }
  for (const { a, f } of assocs) {
    const vs = values.get(a)!;
    const countable = a === 'period' || vs.length <= 1;
    const has = (g: GoalRecord) => ASSOC_FIELD[a](g).some((v) => vs.includes(v));
    candidates.push({
      exact: true,
      dims: vs.map(ASSOC_DIMS[a].alone),
      countable,
      served: [f],
      partitions: vs.map((v) => env.entryPartition(ASSOC_LIST[a](kind), v)),
    });
    if (statusFilter) {
      candidates.push({
        exact: false,
        dims: vs.flatMap((v) => statuses.map((s) => ASSOC_DIMS[a].withStatus(v, s))),
        countable,
        served: [f, statusFilter],
        partitions: vs.flatMap((v) => statuses.map((s) => part(ASSOC_DIMS[a].list, `${v}#${s}`))),
        verify: (g) => has(g) && statuses.includes(g.current_status) && listed(g),
      });
    }
  }

  const reading = stats(candidates.flatMap((c) => c.dims));
  const size = (st: GoalStats, c: Candidate) => c.dims.reduce((n, d) => n + st.count(d).n, 0);
  // a small count is walked (exact at once, as cheap); a large one comes from the counters, which lag by the stream's delay
  const counted = (c: Candidate, st: GoalStats) =>
    page.count && c.served.length === filters.length && c.countable && size(st, c) > SMALL
      ? seesAll.then((all) => (all || c.dims.every((d) => st.count(d).nl === 0) ? size(st, c) : undefined))
      : undefined;
  if (candidates.length === 1 && !byCheckin) {
    // one exact list, whatever the counters say: its keys are read while they are (they only count it)
    const only = candidates[0]!;
    const count = reading.then((st) => (st.ready ? counted(only, st) : undefined));
    return { source: { partitions: only.partitions }, served: only.served, count };
  }
  const st = await reading;
  if (!st.ready) return undefined; // the read models are not built for this tenant yet: the generic plan is exact
  const smallest = (cs: Candidate[]) => cs.reduce((best, c) => (size(st, c) < size(st, best) ? c : best));
  const exactBest = smallest(candidates.filter((c) => c.exact));
  const fewest = smallest(candidates);
  // the exact list when it reads about as much as the smallest (or a few goals): read-your-writes at no cost
  const best = size(st, exactBest) <= Math.max(NEAR, size(st, fewest) + NEAR) ? exactBest : fewest;

  if (byCheckin && size(st, best) > SMALL && st.version >= READ_MODELS_VERSION) {
    // a large list in last-check-in order: walk the order (every filter checked on the goals)
    return { ...checkinOrder(), count: counted(best, st) };
  }
  return {
    source: { partitions: best.partitions },
    served: best.served,
    ...(best.verify ? { verify: best.verify } : {}),
    ...(best.exact ? {} : { readModel: ['filter' as const] }),
    count: counted(best, st),
  };
}

const defaultReads = (kind: GoalKind, env: IndexEnv): PlanReads => ({
  stats: (dims) => readGoalStats(env.ctx, kind, dims),
  known: knownReadiness(env.ctx.tenantId),
  anchors: (skip, newestFirst) => readAnchors(env.ctx, kind, skip, newestFirst),
  recent: (since, atMost) => readRecent(env, kind, since, atMost),
  now: Date.now(),
});

/**
 * The kind's list entries created from bucket `since` on, oldest first: at most EARLY_KEYS before the caller is
 * known (what a refused request may cost), the rest after; undefined as soon as there are more than `atMost`.
 */
async function readRecent(env: IndexEnv, kind: GoalKind, since: string, atMost: number): Promise<ListEntry[] | undefined> {
  const out: ListEntry[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    if (out.length) await env.gate;
    const limit = out.length ? atMost + 1 - out.length : Math.min(atMost + 1, EARLY_KEYS);
    const page = await queryList(env.ctx, keys.entityList(env.ctx.tenantId, kind), {
      forward: true,
      from: bucketStart(since),
      startKey,
      limit,
    });
    out.push(...page.entries);
    startKey = page.lastKey;
  } while (startKey && out.length <= atMost);
  return out.length > atMost ? undefined : out;
}

/**
 * A deep page of the whole list in creation order: the page anchors and the readiness in one round, then the
 * kind's list from the page's bucket on. Undefined (the engine walks the keys) when the read models are not at
 * the anchors' version, the page is in the first buckets, or the caller may not see goals counted before it.
 *
 * Newest first, the unsettled buckets (younger than SETTLE_MS: their anchors may not count every goal yet) come
 * first: their goals are counted on the list's keys, read in the same round (an admin counts every goal not
 * discarded; a member every one not limited, and walks when one is limited, since which of those it sees is
 * not known here), and the anchors are summed from the newest settled bucket on. The list is then read
 * backwards from the end of the page's bucket.
 */
async function anchoredPage(
  { kind, seesAll }: GoalPlanInput,
  env: IndexEnv,
  skip: number,
  reads: PlanReads,
  newestFirst: boolean,
): Promise<ListPlan<GoalRecord> | undefined> {
  const settled = createdBucket(new Date(reads.now - SETTLE_MS).toISOString());
  const list = keys.entityList(env.ctx.tenantId, kind);
  if (!newestFirst) {
    const [ready, anchors, all] = await Promise.all([atVersion(reads, undefined, ANCHORS_VERSION), reads.anchors(skip), seesAll]);
    if (!ready) return undefined;
    const at = placePage(anchors, skip, all, settled);
    if (!at) return undefined;
    return { source: { partitions: [list], from: bucketStart(at.bucket) }, served: [], skipped: at.before, readModel: ['position'] };
  }
  const [ready, anchors, all, recent] = await Promise.all([
    atVersion(reads, undefined, ANCHORS_VERSION),
    reads.anchors(skip, { below: settled }),
    seesAll,
    reads.recent(settled, skip),
  ]);
  if (!ready || !recent) return undefined;
  const head = recent.filter((e) => e.state !== 'discarded');
  if (!all && head.some((e) => e.vis === 'limited')) return undefined;
  const at = placePageNewestFirst(anchors, skip, all, settled, head.length);
  if (!at) return undefined;
  return { source: { partitions: [list], from: bucketEnd(at.bucket) }, served: [], skipped: at.before, readModel: ['position'] };
}

/** Of the named labels, those that exist (a deleted label's entries outlive it; one batch read). */
async function existingLabels(env: IndexEnv, ids: string[]): Promise<string[]> {
  return (await env.loader.many(labelEntity, ids)).map((l) => l.uuid);
}
