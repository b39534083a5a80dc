import { getEntities, mutateEntity, nowIso, retryOnConflict, type DataCtx } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalEntity, type GoalRecord, type MetricRecord } from '#shared/domain/goals/entity.ts';
import { childEntries } from '#shared/domain/goals/hierarchy.ts';
import { NotFoundError } from '#shared/errors.ts';

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
 * Children read strongly consistently (BatchGetItem with ConsistentRead, 100 per call): a child written just
 * before this recompute must be seen with its new progress, or the parent would settle on a stale average
 * that nobody recomputes again.
 */
async function readChildren(ctx: DataCtx, parentUuid: string): Promise<GoalRecord[]> {
  const ids = (await childEntries(ctx, parentUuid)).map((e) => e.id);
  return [...(await getEntities(ctx, goalEntity, ids, true)).values()].map((s) => s.record);
}

/**
 * Recomputes one rollup goal from its children. The parent is read first (mutateEntity) and the children
 * inside the change callback, so if another child's write raced this one and the parent changed meanwhile,
 * the retry reads the children again: whoever commits last has seen every child write committed before it.
 * Returns whether current_progress changed (only then do its own ancestors need a recompute).
 */
async function recomputeRollup(ctx: DomainCtx, uuid: string): Promise<{ changed: boolean; goal: GoalRecord | undefined }> {
  try {
    // Busy parents (many children written at once) can outlast mutateEntity's own retries; the child's
    // write is already committed by now, so a 409 here would wrongly invite the client to repeat it.
    const { before, after } = await retryOnConflict(() =>
      mutateEntity(
        ctx,
        goalEntity,
        uuid,
        async (current) => {
          if (current.record.progress_mode !== 'rollup') return undefined;
          const progress = rollupProgress(uuid, await readChildren(ctx, uuid));
          if (progress === current.record.current_progress) return undefined;
          return { ...current.record, current_progress: progress, updated_at: nowIso() };
        },
        () => new NotFoundError('Goal', uuid),
      ),
    );
    return { changed: before.record.current_progress !== after.current_progress, goal: after };
  } catch (err) {
    if (err instanceof NotFoundError) return { changed: false, goal: undefined }; // a dangling parent link: nothing to bring up to date
    throw err;
  }
}

/** Safety stop for the upward walk; parent links cannot form cycles, so real trees end far earlier. */
const MAX_LEVELS = 64;

/**
 * Brings the given goals (when they are in rollup mode) and every `progress_mode = rollup` ancestor of
 * them up to date, nearest first, before returning. Call after any write that changes a goal's progress,
 * its parent links, its contribution, its discarded/archived state, its progress_mode or its metric. When
 * a goal leaves a parent, pass the former parent too: it is recomputed itself (if rollup) and upwards.
 *
 * A goal may be passed as the record the caller just wrote: when it is not in rollup mode there is nothing
 * to recompute on it, so it is not read again and the walk starts at its parents.
 *
 * Walks up level by level. The given goals' parents are always recomputed (the caller says the goals
 * changed); higher up, only the parents of goals whose progress actually changed, since an unchanged
 * progress cannot move anything above it. Returns the latest record of every goal visited (a rollup goal
 * given here answers with its recomputed progress without another read).
 */
export async function refreshRollups(ctx: DomainCtx, goals: Array<string | GoalRecord>): Promise<Map<string, GoalRecord>> {
  const written = new Map<string, GoalRecord>();
  for (const g of goals) if (typeof g !== 'string') written.set(g.uuid, g);
  const latest = new Map<string, GoalRecord>();
  let level = [...new Set(goals.map((g) => (typeof g === 'string' ? g : g.uuid)))];
  for (let depth = 0; level.length > 0 && depth < MAX_LEVELS; depth++) {
    const next = new Set<string>();
    for (const uuid of level) {
      const known = depth === 0 ? written.get(uuid) : undefined;
      const { changed, goal } = known && known.progress_mode !== 'rollup' ? { changed: false, goal: known } : await recomputeRollup(ctx, uuid);
      if (!goal) continue;
      latest.set(uuid, goal);
      if (changed || depth === 0) for (const l of goal.parent_links) next.add(l.parent_uuid);
    }
    level = [...next];
  }
  return latest;
}
