import { keys } from '#shared/db/keys.ts';
import { GOAL_STATUSES, goalsByLabel, goalsByOwner, goalsByTeam, goalsInPeriod, type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { labelEntity } from '#shared/domain/labels/entity.ts';
import type { IndexEnv, ListPlan, ListQuery } from '#shared/list/engine.ts';
import type { ParsedFilter } from '#shared/list/filter.ts';
import { CHECKIN_SHARDS, dim, rmPartition, RM_LIST, STATUS_SHARDS } from '#shared/stream/read-models/goal-entries.ts';
import { readGoalStats, type GoalStats } from '#shared/stream/read-models/goal-sync.ts';

/**
 * The goal lists' planner over the read models (docs/architecture.md, "Filters"). It reads the tenant's
 * readiness and the counters of every candidate in one batch, then serves the list from the candidate that
 * holds the fewest goals:
 *  - an association's own entry list (period, owner, label, team): written with the goal, read-your-writes;
 *  - a composite read-model list (status within a period, an owner's/label's/team's goals with a status,
 *    status alone) or the last-check-in order, kept by the change stream;
 *  - the kind's whole list.
 * A read-model list lags the table by the stream's delay, so the filters it serves are re-checked on the
 * goals read (a goal that left the list is dropped), and it is chosen only when it holds more than NEAR goals
 * fewer than the best exact alternative: a list read exactly shows a client its own writes at once.
 * `count` comes from the counters when they are exact for the query and the caller (no residual filter, no
 * goal counted twice, and the caller sees every goal they count); otherwise the engine walks.
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
  /** The caller sees every goal (admin): counters of limited goals hold for it too. */
  seesAll: boolean;
}

/** The goal list's plan from its read models, or undefined to let the engine take its generic plan. */
export async function planGoalList({ kind, seesAll }: GoalPlanInput, { filters, sort, page, env }: ListQuery, stats: (dims: string[]) => Promise<GoalStats> = (d) => readGoalStats(env.ctx, kind, d)): Promise<ListPlan<GoalRecord> | undefined> {
  if (filters.some((f) => f.attribute === 'discarded_at')) return undefined; // discarded goals have no read models
  if (filters.some((f) => isSet(f) && STRONGER.has(f.attribute))) return undefined;
  const byCheckin = sort?.attribute === 'last_checkin_date';
  const statusFilter = filters.find((f) => isSet(f) && (f.attribute === 'current_status' || f.attribute === 'status'));
  const assocs = (Object.keys(ASSOC_ATTR) as Assoc[]).flatMap((a) => {
    const f = filters.find((x) => isSet(x) && x.attribute === ASSOC_ATTR[a]);
    return f && valuesOf(f).length <= MAX_ESTIMATED_VALUES ? [{ a, f }] : [];
  });
  if (!statusFilter && assocs.length === 0 && !byCheckin && !(page.count && filters.length === 0)) return undefined;
  if (statusFilter && valuesOf(statusFilter).length > GOAL_STATUSES.length) return undefined;
  if (filters.length === 0 && !byCheckin) {
    // the whole list counted: its first page is read while the counter is
    const count = stats([dim.all]).then((st) => {
      const c = st.count(dim.all);
      return st.ready && (seesAll || c.nl === 0) && c.n > SMALL ? c.n : undefined;
    });
    return { source: { partitions: [keys.entityList(env.ctx.tenantId, kind)] }, served: [], count };
  }

  const statuses = statusFilter ? [...new Set(valuesOf(statusFilter).map((s) => s.toLowerCase()))].filter((s) => (GOAL_STATUSES as readonly string[]).includes(s)) : [];
  const values = new Map<Assoc, string[]>();
  for (const { a, f } of assocs) values.set(a, a === 'label' ? await existingLabels(env, valuesOf(f)) : valuesOf(f));

  const part = (list: string, value: string) => rmPartition(env.ctx.tenantId, kind, list, value);
  // Only candidates that can win are estimated (each dimension read costs up to COUNTER_SHARDS items): an
  // association's list holds no more than the whole list, a composite no more than status alone.
  const candidates: Candidate[] = assocs.length === 0 || (page.count && filters.length === 0) ? [{ exact: true, dims: [dim.all], countable: true, served: [], partitions: [keys.entityList(env.ctx.tenantId, kind)] }] : [];
  if (statusFilter && assocs.length === 0) {
    candidates.push({
      exact: false,
      dims: statuses.map(dim.status),
      countable: true,
      served: [statusFilter],
      partitions: statuses.flatMap((s) => Array.from({ length: STATUS_SHARDS }, (_, n) => part(RM_LIST.status, `${s}#${n}`))),
      verify: (g) => statuses.includes(g.current_status),
    });
  }
  for (const { a, f } of assocs) {
    const vs = values.get(a)!;
    const countable = a === 'period' || vs.length <= 1;
    const has = (g: GoalRecord) => ASSOC_FIELD[a](g).some((v) => vs.includes(v));
    candidates.push({ exact: true, dims: vs.map(ASSOC_DIMS[a].alone), countable, served: [f], partitions: vs.map((v) => env.entryPartition(ASSOC_LIST[a](kind), v)) });
    if (statusFilter) {
      candidates.push({
        exact: false,
        dims: vs.flatMap((v) => statuses.map((s) => ASSOC_DIMS[a].withStatus(v, s))),
        countable,
        served: [f, statusFilter],
        partitions: vs.flatMap((v) => statuses.map((s) => part(ASSOC_DIMS[a].list, `${v}#${s}`))),
        verify: (g) => has(g) && statuses.includes(g.current_status),
      });
    }
  }

  const st = await stats(candidates.flatMap((c) => c.dims));
  if (!st.ready) return undefined; // the read models are not built for this tenant yet: the generic plan is exact
  const size = (c: Candidate) => c.dims.reduce((n, d) => n + st.count(d).n, 0);
  const exactFor = (c: Candidate) => c.countable && (seesAll || c.dims.every((d) => st.count(d).nl === 0));
  const smallest = (cs: Candidate[]) => cs.reduce((best, c) => (size(c) < size(best) ? c : best));
  const exactBest = smallest(candidates.filter((c) => c.exact));
  const fewest = smallest(candidates);
  // the exact list when it reads about as much as the smallest (or a few goals): read-your-writes at no cost
  const best = size(exactBest) <= Math.max(NEAR, size(fewest) + NEAR) ? exactBest : fewest;

  // a small count is walked (exact at once, as cheap); a large one comes from the counters, which lag by the stream's delay
  const counted = (c: Candidate) => (page.count && c.served.length === filters.length && exactFor(c) && size(c) > SMALL ? size(c) : undefined);
  if (byCheckin && size(best) > SMALL) {
    // a large list in last-check-in order: walk the order's shards (merged), every filter checked on the goals
    return {
      source: { partitions: Array.from({ length: CHECKIN_SHARDS }, (_, n) => part(RM_LIST.checkin, String(n))) },
      served: [],
      ordered: true,
      descending: sort!.direction === 'desc',
      count: counted(best),
    };
  }
  return { source: { partitions: best.partitions }, served: best.served, ...(best.verify ? { verify: best.verify } : {}), count: counted(best) };
}

/** Of the named labels, those that exist (a deleted label's entries outlive it; one batch read). */
async function existingLabels(env: IndexEnv, ids: string[]): Promise<string[]> {
  return (await env.loader.many(labelEntity, ids)).map((l) => l.uuid);
}
