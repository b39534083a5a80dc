import { getEntities, nowIso, retryOnConflict, WriteTx, type DataCtx, type Stored } from '#shared/db/store.ts';
import { goalEntity, type GoalRecord, type MetricRecord } from '#shared/domain/goals/entity.ts';
import { childEntries } from '#shared/domain/goals/hierarchy.ts';
import { MAX_TRANSACTION_ITEMS } from '#shared/errors.ts';

/**
 * Metric math and rollup (contract section 6). OWNED BY THE CHECK-INS WORK: goals code only calls these.
 *
 * Decisions:
 * - Progress is a percentage 0-100 rounded to 2 decimals, so 1/3 of the way reads 33.33 and float noise
 *   (0.7 * 100 = 70.00000000000001) never reaches a client.
 * - A goal without a metric tracks its progress in percent: its check-in value is read against an implicit
 *   reach metric 0 → 100 (see `goalProgressAt`).
 * - Rollup: the average of the children's current_progress weighted by each child's contribution_percent
 *   towards this parent; discarded and archived children are left out; a child with no progress yet counts
 *   as 0 (it has contributed nothing so far); with no counted child (or only zero weights) progress is null.
 */

const round2 = (n: number) => Math.round(n * 100) / 100;
const clamp = (n: number) => Math.min(100, Math.max(0, n));

/** Progress 0-100 of a metric at `value` (null when there is no value). */
export function metricProgress(metric: MetricRecord, value: number | null): number | null {
  if (value === null || value === undefined) return null;
  const start = metric.start_value;
  const target = metric.target_value;
  switch (metric.metric_type) {
    case 'reach':
      // Dividing by (target - start) makes a decreasing target (start 100 → target 20) work unchanged.
      // A degenerate metric (target = start) is reached once the value is at or past the target.
      if (target === start) return value >= target ? 100 : 0;
      return round2(clamp(((value - start) * 100) / (target - start)));
    case 'stay_above':
      return value >= target ? 100 : 0;
    case 'stay_below':
      return value <= target ? 100 : 0;
    case 'stay_between': {
      // The band is [start, target]; a band written the other way round is read as the same band.
      const lo = Math.min(start, target);
      const hi = Math.max(start, target);
      return value >= lo && value <= hi ? 100 : 0;
    }
  }
}

/** The implicit metric of a goal without one: the value is the progress in percent. */
export const PERCENT_METRIC: MetricRecord = { uuid: '', name: null, start_value: 0, target_value: 100, unit: '%', metric_type: 'reach' };

/** Progress of a goal at a check-in value: its metric's progress, or the value as a percentage without a metric. */
export const goalProgressAt = (goal: Pick<GoalRecord, 'metric'>, value: number | null): number | null => metricProgress(goal.metric ?? PERCENT_METRIC, value);

/** A child counts towards its parents' rollup unless it is discarded or archived. */
export const countsInRollup = (g: GoalRecord) => !g.discarded_at && !g.archived_at;

/**
 * Weighted average of the children's progress towards `parentUuid` (null children count as 0), or null
 * when no child counts. Pure, so the rule is unit-tested apart from storage.
 */
export function rollupProgress(parentUuid: string, children: GoalRecord[]): number | null {
  let weighted = 0;
  let weights = 0;
  for (const c of children) {
    if (!countsInRollup(c)) continue;
    // A child linked twice to the same parent is counted once with its first link's contribution.
    const link = c.parent_links.find((l) => l.parent_uuid === parentUuid);
    if (!link) continue; // the child index lags a link removal: not a child any more
    const w = link.contribution_percent;
    if (!(w > 0)) continue;
    weighted += (c.current_progress ?? 0) * w;
    weights += w;
  }
  return weights > 0 ? round2(weighted / weights) : null;
}

/**
 * The largest hierarchy one write may bring up to date: the goals given plus their rollup ancestors. A write
 * whose rollup ancestry is larger updates the nearest MAX_ROLLUP_GOALS (read level by level from the goal)
 * and leaves the rest to the change stream's projection, which runs the same code (docs/data-model.md).
 */
export const MAX_ROLLUP_GOALS = 500;

/** What a rollup refresh read: goal records (with versions where read from the table) and each rollup goal's child ids. */
export interface RollupState {
  goals: Map<string, GoalRecord>;
  childrenOf: Map<string, string[]>;
}

/**
 * Pure: the new `current_progress` of every rollup goal that moves when `start` changed. A goal is recomputed
 * when it is a start goal in rollup mode or one of its children moved (the start goals always count as
 * moved); goals are visited children first (topological order over the goals read), each once, so a
 * lattice costs its size, not its number of paths. A cycle (never stored, but defended against) is skipped.
 */
export function planRollups(state: RollupState, start: string[]): Map<string, number | null> {
  const { goals, childrenOf } = state;
  const rollups = [...childrenOf.keys()].filter((id) => goals.get(id)?.progress_mode === 'rollup');
  const inSet = new Set(rollups);
  // Kahn's algorithm on the rollup goals: a goal is ready once every child of it that is itself a rollup goal here is done.
  const pending = new Map(rollups.map((id) => [id, (childrenOf.get(id) ?? []).filter((c) => inSet.has(c) && c !== id).length]));
  const parentsOf = new Map<string, string[]>();
  for (const id of rollups) for (const c of childrenOf.get(id) ?? []) if (inSet.has(c) && c !== id) parentsOf.set(c, [...(parentsOf.get(c) ?? []), id]);
  const ready = rollups.filter((id) => pending.get(id) === 0);
  const moved = new Set(start);
  const progress = new Map<string, number | null>();
  const current = (id: string) => (progress.has(id) ? { ...goals.get(id)!, current_progress: progress.get(id)! } : goals.get(id));
  while (ready.length) {
    const id = ready.shift()!;
    const children = childrenOf.get(id) ?? [];
    if (moved.has(id) || children.some((c) => moved.has(c))) {
      const next = rollupProgress(id, children.map(current).filter((g): g is GoalRecord => !!g));
      if (next !== goals.get(id)!.current_progress) {
        progress.set(id, next);
        moved.add(id);
      }
    }
    for (const p of parentsOf.get(id) ?? []) {
      pending.set(p, pending.get(p)! - 1);
      if (pending.get(p) === 0) ready.push(p);
    }
  }
  return progress;
}

/** Ancestor ids a goal names without another read: its parents and its first-parent line (`path`). */
const namedAbove = (g: GoalRecord) => [...g.parent_links.map((l) => l.parent_uuid), ...(g.path ? g.path.split('/').slice(0, -1) : [])];

/**
 * Read plan of a refresh: the start goals, then every ancestor reachable through goals that can move (a
 * start goal or a rollup goal), batched: each round trip fetches every id named so far (a goal's `path` names
 * its whole first-parent line at once, so a chain costs one or two batches, not one per level); then the
 * children of every rollup goal (one Query each, all at once) and the children not read yet (one batch).
 * Strongly consistent: a child written just before must be seen with its new progress.
 */
async function readRollupState(ctx: DataCtx, start: string[], written: Map<string, GoalRecord>): Promise<{ state: RollupState; stored: Map<string, Stored<GoalRecord>> }> {
  const stored = new Map<string, Stored<GoalRecord>>();
  const goals = new Map<string, GoalRecord>(written);
  const startSet = new Set(start);
  const walksUp = (g: GoalRecord) => startSet.has(g.uuid) || g.progress_mode === 'rollup';
  const named = new Set<string>();
  const name = (id: string) => named.size < MAX_ROLLUP_GOALS && named.add(id);
  for (const id of start) {
    const known = written.get(id);
    if (known && known.progress_mode !== 'rollup') namedAbove(known).forEach(name);
    else name(id);
  }
  for (let fetched = new Set<string>(); ; ) {
    const missing = [...named].filter((id) => !fetched.has(id));
    if (!missing.length) break;
    missing.forEach((id) => fetched.add(id));
    for (const [id, s] of await getEntities(ctx, goalEntity, missing, true)) {
      stored.set(id, s);
      goals.set(id, s.record);
    }
    for (const id of missing) {
      const g = goals.get(id);
      if (g && walksUp(g)) namedAbove(g).forEach(name);
    }
  }
  const rollups = [...stored.values()].map((s) => s.record).filter((g) => g.progress_mode === 'rollup');
  const childLists = await Promise.all(rollups.map((g) => childEntries(ctx, g.uuid)));
  const childrenOf = new Map(rollups.map((g, i) => [g.uuid, [...new Set(childLists[i]!.map((e) => e.id))]]));
  const unread = [...new Set(childLists.flat().map((e) => e.id))].filter((id) => !goals.has(id));
  for (const [id, s] of await getEntities(ctx, goalEntity, unread, true)) goals.set(id, s.record);
  return { state: { goals, childrenOf }, stored };
}

/**
 * Brings the given goals (when they are in rollup mode) and every `progress_mode = rollup` ancestor of
 * them up to date before returning. Call after any write that changes a goal's progress, its parent links,
 * its contribution, its discarded/archived state, its progress_mode or its metric. When a goal leaves a
 * parent, pass the former parent too: it is recomputed itself (if rollup) and upwards.
 *
 * A goal may be passed as the record the caller just wrote: when it is not in rollup mode there is nothing
 * to recompute on it, so it is not read again and the walk starts at its parents.
 *
 * Read (readRollupState, batched), decide (planRollups, pure), write: the goals that moved, children first,
 * in transactions of at most 100 conditioned on the versions read, so a concurrent recompute of a shared
 * ancestor makes one of them read again (retryOnConflict): whoever commits last has seen every child write
 * committed before it. Returns the latest record of every goal read (recomputed ones with their new progress).
 */
export async function refreshRollups(ctx: DataCtx, goals: Array<string | GoalRecord>): Promise<Map<string, GoalRecord>> {
  const written = new Map<string, GoalRecord>();
  for (const g of goals) if (typeof g !== 'string') written.set(g.uuid, g);
  const start = [...new Set(goals.map((g) => (typeof g === 'string' ? g : g.uuid)))];
  // Busy parents (many children written at once) can outlast one round of retries; the child's write is
  // already committed by now, so a 409 here would wrongly invite the client to repeat it: retry longer.
  return retryOnConflict(() => retryOnConflict(async () => {
    const { state, stored } = await readRollupState(ctx, start, written);
    const moved = planRollups(state, start);
    const latest = new Map(state.goals);
    const now = nowIso();
    let tx = new WriteTx(ctx);
    for (const [id, progress] of moved) {
      const before = stored.get(id)!;
      const after = { ...before.record, current_progress: progress, updated_at: now, progress_cause: { cause: 'rollup' as const, at: now } };
      if (tx.size >= MAX_TRANSACTION_ITEMS) {
        await tx.commit();
        tx = new WriteTx(ctx);
      }
      tx.replace(goalEntity, before, after);
      latest.set(id, after);
    }
    await tx.commit();
    return latest;
  }));
}
