import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import { refreshRollups } from '#shared/domain/goals/progress.ts';
import { entityRecord } from '#shared/stream/changes.ts';
import type { Projection, TableChange } from '#shared/stream/projection.ts';

/** The goal fields a parent's rollup is computed from (progress.ts rollupProgress). */
const ROLLUP_INPUTS = ['current_progress', 'parent_links', 'progress_mode', 'discarded_at', 'archived_at', 'metric'] as const;

const moved = (before: GoalRecord | undefined, after: GoalRecord | undefined) =>
  !before || !after || ROLLUP_INPUTS.some((k) => JSON.stringify(before[k] ?? null) !== JSON.stringify(after[k] ?? null));

/**
 * Rollups (contract section 6) from the change stream: when a goal's progress, parent links, mode, metric or
 * discarded/archived state changed (or it was created or hard-deleted), the goal itself (if it rolls up) and
 * every rollup ancestor, of its new parents and of the parents it left, are recomputed from their children.
 *
 * The request path does the same before it answers (read-your-writes); this is the backstop that makes the
 * result certain when that function died between its commit and the refresh. Idempotent and
 * order-insensitive: every recompute reads the children as they are now (strongly consistent) and writes the
 * parent conditioned on the version it read, so replays and reordering converge to the same average.
 */
export const rollupProjection: Projection = {
  name: 'rollups',
  accepts(change: TableChange) {
    const before = entityRecord<GoalRecord>(change, 'goal', 'old');
    const after = entityRecord<GoalRecord>(change, 'goal', 'new');
    return (before !== undefined || after !== undefined) && moved(before, after);
  },
  async apply(change, ctx) {
    const before = entityRecord<GoalRecord>(change, 'goal', 'old');
    const after = entityRecord<GoalRecord>(change, 'goal', 'new');
    const uuid = (after ?? before)!.uuid;
    const kept = new Set(after?.parent_links.map((l) => l.parent_uuid) ?? []);
    const left = (before?.parent_links ?? []).map((l) => l.parent_uuid).filter((p) => !kept.has(p));
    // A deleted goal is gone: only the parents it left need a recompute. Otherwise the goal by uuid (read again,
    // so a rollup goal is recomputed on current data) and, through it, its parents.
    await refreshRollups(ctx.data, after ? [uuid, ...left] : left);
  },
};
