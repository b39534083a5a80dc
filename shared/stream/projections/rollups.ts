import { anyMoved, ROLLUP_INPUTS } from '#shared/domain/goals/derived-fields.ts';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import { rollupSynced } from '#shared/domain/goals/progress.ts';
import { refreshRollups } from '#shared/domain/goals/rollup-writes.ts';
import { entityRecord, versionOf } from '#shared/stream/changes.ts';
import type { Projection } from '#shared/stream/projection.ts';
import type { TableChange } from '#shared/table-change.ts';

// what a rollup is made from: declared once, in goals/derived-fields.ts
const moved = (before: GoalRecord | undefined, after: GoalRecord | undefined) =>
  !before || !after || anyMoved(ROLLUP_INPUTS, before, after);

/**
 * Rollups (contract section 6) from the change stream: when a goal's progress, parent links, mode, metric or
 * discarded/archived state changed (or it was created or hard-deleted), the goal itself (if it rolls up) and
 * every rollup ancestor, of its new parents and of the parents it left, are recomputed from their children.
 *
 * A change written together with its effect on its parents (a check-in moves its ancestors' aggregates in its
 * own transaction; a recompute that fits one transaction) is marked `rollup_synced_v` = the item's version,
 * and is skipped: nothing can have drifted by it, and recomputing a parent of 400 children per check-in is the
 * cost the aggregates exist to avoid. Every other change (a goal edit whose refresh came after its commit, a
 * write that died before its refresh, an operator's or an import's write) is recomputed: that repairs any
 * drift it left. Idempotent and order-insensitive: every recompute reads the parent, then its children as
 * they are now (strongly consistent), and writes the parent conditioned on the version it read, so replays
 * and reordering converge to the same average.
 */
export const rollupProjection: Projection = {
  name: 'rollups',
  after: ['current-values'], // a check-in's goal settles before its ancestors are recomputed from it
  accepts(change: TableChange) {
    const before = entityRecord<GoalRecord>(change, 'goal', 'old');
    const after = entityRecord<GoalRecord>(change, 'goal', 'new');
    return (before !== undefined || after !== undefined) && moved(before, after) && !rollupSynced(after, versionOf(change.newImage));
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
