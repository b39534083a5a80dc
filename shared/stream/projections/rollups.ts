import { replaceOp } from '#shared/db/tx-ops.ts';
import { decided } from '#shared/decision.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { planRollupWrites, rollupSynced } from '#shared/domain/goals/progress.ts';
import { decideRollupRecords, readRollupState } from '#shared/domain/goals/rollup-writes.ts';
import { anyMoved, ROLLUP_INPUTS } from '#shared/domain/goals/derived-fields.ts';
import { entityRecord, versionOf } from '#shared/stream/changes.ts';
import type { Projection } from '#shared/stream/projection.ts';
import type { TableChange } from '#shared/table-change.ts';

// what a rollup is made from: declared once, in goals/derived-fields.ts
const moved = (before: GoalRecord | undefined, after: GoalRecord | undefined) =>
  !before || !after || anyMoved(ROLLUP_INPUTS, before, after);

/**
 * Where a recompute starts: the goal by uuid (read again, so a rollup goal is recomputed on current data) and,
 * through it, its parents; and the parents it left. A deleted goal is gone: only the parents it left.
 */
export function rollupStart(change: TableChange): string[] {
  const before = entityRecord<GoalRecord>(change, 'goal', 'old');
  const after = entityRecord<GoalRecord>(change, 'goal', 'new');
  const kept = new Set(after?.parent_links.map((l) => l.parent_uuid) ?? []);
  const left = (before?.parent_links ?? []).map((l) => l.parent_uuid).filter((p) => !kept.has(p));
  return [...new Set(after ? [after.uuid, ...left] : left)];
}

/** What the recompute read: the goals from the start up every rollup ancestor, and each rollup goal's children. */
export type RollupsState = Awaited<ReturnType<typeof readRollupState>>;

/**
 * Rollups (contract section 6) from the change stream: when a goal's progress, parent links, mode, metric or
 * discarded/archived state changed (or it was created or hard-deleted), the goal itself (if it rolls up) and
 * every rollup ancestor, of its new parents and of the parents it left, are recomputed from their children:
 * the refresh a goal write runs after its commit (goals/rollup-writes.ts refreshRollups), as a projection.
 * Reads `readRollupState` (the ancestors, then every rollup goal's children, strongly consistent), projects
 * `planRollupWrites` and `decideRollupRecords` (pure), and commits the goals that changed, children first, in
 * as few transactions as they fit, each goal conditioned on the version read.
 *
 * A change written together with its effect on its parents (a check-in moves its ancestors' aggregates in its
 * own transaction; a recompute that fits one transaction) is marked `rollup_synced_v` = the item's version,
 * and is skipped: nothing can have drifted by it, and recomputing a parent of 400 children per check-in is the
 * cost the aggregates exist to avoid. Every other change (a goal edit whose refresh came after its commit, a
 * write that died before its refresh, an operator's or an import's write) is recomputed: that repairs any
 * drift it left. Idempotent and order-insensitive: every recompute reads the parents, then their children as
 * they are now, and writes each parent conditioned on the version it read, so replays and reordering
 * converge to the same average.
 */
export const rollupProjection: Projection<RollupsState> = {
  name: 'rollups',
  after: ['current-values'], // a check-in's goal settles before its ancestors are recomputed from it
  accepts(change: TableChange) {
    const before = entityRecord<GoalRecord>(change, 'goal', 'old');
    const after = entityRecord<GoalRecord>(change, 'goal', 'new');
    return (before !== undefined || after !== undefined) && moved(before, after) && !rollupSynced(after, versionOf(change.newImage));
  },
  reads: (change, data) => readRollupState(data, rollupStart(change), new Map()),
  project(change, read, now) {
    const changes = decided(decideRollupRecords(read, planRollupWrites(read.state, rollupStart(change)), now));
    return changes.length ? { packed: changes.map(({ before, after }) => replaceOp(goalEntity, before, after)) } : {};
  },
};
