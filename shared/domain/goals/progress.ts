import type { GoalRecord, MetricRecord } from '#shared/domain/goals/entity.ts';

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
 * - A rollup goal keeps the aggregate of its counted children (`rollup`: Σ weight × progress and Σ weight, in
 *   integer hundredths, so adding deltas and summing from scratch give the same numbers, exactly). A check-in
 *   moves its ancestors by deltas in its own transaction (`planGoalWrite`, rollup-plan.ts): a bounded number of items
 *   whatever the number of siblings. A full recompute from the children (`refreshRollups`) serves the other
 *   writes and the change stream, which repairs any drift (docs/data-model.md, "Rollups").
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
export const goalProgressAt = (goal: Pick<GoalRecord, 'metric'>, value: number | null): number | null =>
  metricProgress(goal.metric ?? PERCENT_METRIC, value);

/** A child counts towards its parents' rollup unless it is discarded or archived. */
export const countsInRollup = (g: GoalRecord) => !g.discarded_at && !g.archived_at;

/**
 * A rollup goal's aggregate of its counted children, in integer hundredths: `sum` = Σ weight × progress and
 * `weight` = Σ weight (weight = contribution_percent towards this parent). Integers, so sums of deltas and a
 * sum from scratch agree exactly and the stored aggregate never drifts by rounding.
 */
export type RollupAggregate = NonNullable<GoalRecord['rollup']>;

const NOTHING: RollupAggregate = { sum: 0, weight: 0 };
/** Progress is stored with 2 decimals; weights count to 2 decimals. */
const hundredths = (n: number) => Math.round(n * 100);
const sameAggregate = (a: RollupAggregate, b: RollupAggregate | null | undefined) => !!b && a.sum === b.sum && a.weight === b.weight;

/**
 * What `child` adds to `parentUuid`'s aggregate: its weight towards that parent and weight × progress (no
 * progress yet counts 0); nothing when it does not count there (discarded, archived, not linked, weight 0).
 * A child linked twice to the same parent counts once, with its first link's contribution.
 */
export function contributionTo(parentUuid: string, child: GoalRecord | undefined): RollupAggregate {
  if (!child || !countsInRollup(child)) return NOTHING;
  const link = child.parent_links.find((l) => l.parent_uuid === parentUuid);
  const weight = link ? hundredths(link.contribution_percent) : 0;
  return weight > 0 ? { sum: weight * hundredths(child.current_progress ?? 0), weight } : NOTHING;
}

/** The aggregate of `children` towards `parentUuid`, summed from scratch (each child once). */
export function aggregateOf(parentUuid: string, children: GoalRecord[]): RollupAggregate {
  const seen = new Set<string>();
  let sum = 0;
  let weight = 0;
  for (const c of children) {
    if (seen.has(c.uuid)) continue;
    seen.add(c.uuid);
    const a = contributionTo(parentUuid, c);
    sum += a.sum;
    weight += a.weight;
  }
  return { sum, weight };
}

/** Progress 0-100 (2 decimals) of an aggregate, null when nothing counts. Integer division is correctly rounded, so halves round up exactly. */
export const aggregateProgress = (a: RollupAggregate): number | null => (a.weight > 0 ? Math.round(a.sum / a.weight) / 100 : null);

/**
 * The largest hierarchy one write may bring up to date: the goals given plus their rollup ancestors. A write
 * whose rollup ancestry is larger updates the nearest MAX_ROLLUP_GOALS (read level by level from the goal)
 * and leaves the rest to the change stream's projection, which runs the same code (docs/data-model.md).
 */
export const MAX_ROLLUP_GOALS = 500;

/**
 * `nodes` ordered children first (Kahn's algorithm over the `[child, parent]` edges between them), so a goal
 * comes after every child of it in the set: a lattice costs its size, not its number of paths. Goals on a
 * cycle (never stored, but defended against) are left out.
 */
function childrenFirst(nodes: string[], edges: Array<[string, string]>): string[] {
  const inSet = new Set(nodes);
  const pending = new Map(nodes.map((id) => [id, 0]));
  const parentsOf = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const [child, parent] of edges) {
    const edge = `${child}>${parent}`;
    if (child === parent || !inSet.has(child) || !inSet.has(parent) || seen.has(edge)) continue;
    seen.add(edge);
    pending.set(parent, pending.get(parent)! + 1);
    parentsOf.set(child, [...(parentsOf.get(child) ?? []), parent]);
  }
  const ready = nodes.filter((id) => pending.get(id) === 0);
  const order: string[] = [];
  for (let i = 0; i < ready.length; i++) {
    const id = ready[i]!;
    order.push(id);
    for (const p of parentsOf.get(id) ?? []) {
      pending.set(p, pending.get(p)! - 1);
      if (pending.get(p) === 0) ready.push(p);
    }
  }
  return order;
}

/** Ancestor ids a goal names without another read: its parents and its first-parent line (`path`). */
export const namedAbove = (g: GoalRecord) => [
  ...g.parent_links.map((l) => l.parent_uuid),
  ...(g.path ? g.path.split('/').slice(0, -1) : []),
];

// ---------- the check-in path: ancestors move by deltas, in the write's own transaction ----------

/** Each parent whose aggregate a goal's change from `before` to `after` moves (created: no before; gone: no after), with the delta. */
export function parentDeltas(before: GoalRecord | undefined, after: GoalRecord | undefined): Map<string, RollupAggregate> {
  const out = new Map<string, RollupAggregate>();
  for (const p of new Set([...(before?.parent_links ?? []), ...(after?.parent_links ?? [])].map((l) => l.parent_uuid))) {
    const a = contributionTo(p, after);
    const b = contributionTo(p, before);
    if (a.sum !== b.sum || a.weight !== b.weight) out.set(p, { sum: a.sum - b.sum, weight: a.weight - b.weight });
  }
  return out;
}

export interface AncestorDeltas {
  /** The rollup ancestors' new records (aggregate, and progress when it moved), to write conditioned on the versions read. */
  writes: Map<string, GoalRecord>;
  /** Goals a delta reached that keep no aggregate (not in rollup mode): checked unchanged at the version read, so a concurrent switch to rollup makes the write retry. */
  checks: string[];
  /** False when a delta reached a goal not in `above`, a rollup goal without an aggregate, a drifted aggregate, or a cycle: recompute instead. */
  complete: boolean;
}

/**
 * Pure: what `goal`'s change from `before` to `after` does to its ancestors, by deltas. Each parent's
 * aggregate takes the child's change of contribution, its progress follows, and a parent whose progress
 * moved passes its own change on; children first, each goal once however many paths lead to it. `above`:
 * the ancestors read (readAncestors), with their aggregates. A check-in reads and writes these few goals,
 * whatever the number of siblings.
 */
export function planAncestorDeltas(
  before: GoalRecord | undefined,
  after: GoalRecord,
  above: Map<string, GoalRecord>,
  now: string,
): AncestorDeltas {
  const pending = new Map<string, RollupAggregate>();
  let complete = true;
  const pass = (b: GoalRecord | undefined, a: GoalRecord) => {
    for (const [p, d] of parentDeltas(b, a)) {
      if (!above.has(p) || p === after.uuid) complete = false;
      const acc = pending.get(p) ?? NOTHING;
      pending.set(p, { sum: acc.sum + d.sum, weight: acc.weight + d.weight });
    }
  };
  pass(before, after);
  const ids = [...above.keys()].filter((id) => id !== after.uuid);
  const order = childrenFirst(
    ids,
    ids.flatMap((id) => above.get(id)!.parent_links.map((l): [string, string] => [id, l.parent_uuid])),
  );
  const writes = new Map<string, GoalRecord>();
  const checks: string[] = [];
  for (const id of order) {
    const d = pending.get(id);
    if (!d) continue;
    pending.delete(id);
    const g = above.get(id)!;
    if (g.progress_mode !== 'rollup') {
      checks.push(id);
      continue;
    }
    const rollup = g.rollup ? { sum: g.rollup.sum + d.sum, weight: g.rollup.weight + d.weight } : undefined;
    if (!rollup || rollup.sum < 0 || rollup.weight < 0) {
      complete = false; // no aggregate kept yet, or one that drifted: a recompute from the children sets it
      continue;
    }
    const progress = aggregateProgress(rollup);
    const moved = progress !== g.current_progress;
    const next: GoalRecord = {
      ...g,
      rollup,
      current_progress: progress,
      ...(moved ? { updated_at: now, progress_cause: { cause: 'rollup' as const, at: now } } : {}),
    };
    writes.set(id, next);
    if (moved) pass(g, next);
  }
  if (pending.size) complete = false; // a delta for a goal on a cycle (never stored) or not read
  return { writes, checks, complete };
}

/** True when a goal record was written together with its effect on its parents' rollups (the stream's projection has nothing to do). */
export const rollupSynced = (record: GoalRecord | undefined, version: number) => !!record && record.rollup_synced_v === version;

// ---------- every other write and the change stream: recompute from the children ----------

/** What a rollup refresh read: goal records (with versions where read from the table) and each rollup goal's child ids. */
export interface RollupState {
  goals: Map<string, GoalRecord>;
  childrenOf: Map<string, string[]>;
}

/** What a recompute writes on a rollup goal: its progress and its aggregate. */
export interface RollupWrite {
  progress: number | null;
  rollup: RollupAggregate;
}

/**
 * Pure: the new progress and aggregate of every rollup goal a recompute changes when `start` changed. A goal
 * is recomputed when it is a start goal in rollup mode or one of its children moved (the start goals always
 * count as moved); goals are visited children first, each once. A goal whose progress is right but whose
 * aggregate is missing or off gets its aggregate written; only a move of progress goes on upwards.
 */
export function planRollupWrites(state: RollupState, start: string[]): Map<string, RollupWrite> {
  const { goals, childrenOf } = state;
  const rollups = [...childrenOf.keys()].filter((id) => goals.get(id)?.progress_mode === 'rollup');
  const moved = new Set(start);
  const writes = new Map<string, RollupWrite>();
  const current = (id: string) => {
    const g = goals.get(id);
    const w = writes.get(id);
    return g && w ? { ...g, current_progress: w.progress } : g;
  };
  for (const id of childrenFirst(
    rollups,
    rollups.flatMap((p) => (childrenOf.get(p) ?? []).map((c): [string, string] => [c, p])),
  )) {
    const children = childrenOf.get(id) ?? [];
    if (!moved.has(id) && !children.some((c) => moved.has(c))) continue;
    const rollup = aggregateOf(
      id,
      children.map(current).filter((g): g is GoalRecord => !!g),
    );
    const progress = aggregateProgress(rollup);
    const g = goals.get(id)!;
    if (progress !== g.current_progress) moved.add(id);
    if (progress !== g.current_progress || !sameAggregate(rollup, g.rollup)) writes.set(id, { progress, rollup });
  }
  return writes;
}
