/**
 * A goal write with the rollup ancestors that move with it, decided purely (the decide half of the read, decide,
 * write of a check-in or a goal create): what `readAncestors` (rollup-writes.ts) read, planned by deltas
 * (progress.ts `planAncestorDeltas`), for the command's one transaction (`addGoalWrite`).
 */
import type { Stored } from '#shared/db/model.ts';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import { parentDeltas, planAncestorDeltas } from '#shared/domain/goals/progress.ts';
import { MAX_TRANSACTION_ITEMS } from '#shared/errors.ts';

/** The rollup ancestors of a goal as read: stored with their versions; `truncated` when the walk stopped at MAX_ROLLUP_GOALS. */
export interface AncestorsRead {
  stored: ReadonlyMap<string, Stored<GoalRecord>>;
  truncated: boolean;
}

/** A goal write with the rollup ancestors that move with it, in one transaction (`addGoalWrite`). */
export interface GoalWriteWithRollups {
  /** The goal as read (undefined: created by this write). */
  before: Stored<GoalRecord> | undefined;
  /** The goal record to write; when `synced`, marked `rollup_synced_v` (its effect on its parents is in the same transaction). */
  goal: GoalRecord;
  /** Rollup ancestors written in the same transaction, each conditioned on the version read. */
  ancestors: Array<{ before: Stored<GoalRecord>; after: GoalRecord }>;
  /** Goals a delta reached that are not in rollup mode, checked at the version read. */
  checks: Stored<GoalRecord>[];
  /** False when the ancestors could not move with the goal: they are recomputed after the commit (the stream does too). */
  synced: boolean;
}

/**
 * Pure: the rollup side of a goal write whose own mode and metric do not change (a check-in, a create): each
 * ancestor's aggregate moved by the goal's change, children first. Not synced when an ancestor keeps no aggregate
 * yet (its first recompute sets it), the ancestry read was cut at MAX_ROLLUP_GOALS, or the mode or metric moved.
 *
 * Why this is right under concurrency: every goal written or checked is conditioned on the version read, so the
 * transaction commits only if the goal and those ancestors are exactly as read; an aggregate read with the child it
 * counts is consistent with it (each write that moves a child moves its parents' aggregates in the same
 * transaction, or is followed by a recompute), so adding the delta keeps it equal to the sum over the children.
 * Concurrent check-ins on siblings serialize on the parent: the loser reads again and retries.
 */
export function planGoalWrite(
  before: Stored<GoalRecord> | undefined,
  after: GoalRecord,
  above: AncestorsRead,
  now: string,
): GoalWriteWithRollups {
  const marked = { ...after, rollup_synced_v: (before?.version ?? 0) + 1 };
  const unsynced: GoalWriteWithRollups = { before, goal: after, ancestors: [], checks: [], synced: false };
  const was = before?.record;
  if (was && (was.progress_mode !== after.progress_mode || JSON.stringify(was.metric ?? null) !== JSON.stringify(after.metric ?? null)))
    return unsynced;
  if (!parentDeltas(was, after).size) return { before, goal: marked, ancestors: [], checks: [], synced: true };
  if (above.truncated) return unsynced;
  const plan = planAncestorDeltas(was, after, new Map([...above.stored].map(([id, s]) => [id, s.record])), now);
  if (!plan.complete) return unsynced;
  return {
    before,
    goal: marked,
    ancestors: [...plan.writes].map(([id, next]) => {
      const read = above.stored.get(id)!;
      return { before: read, after: { ...next, rollup_synced_v: read.version + 1 } };
    }),
    checks: plan.checks.map((id) => above.stored.get(id)!),
    synced: true,
  };
}

/** The plan as it fits a transaction holding `txItems` other items: unsynced (ancestors recomputed after) when the goal and its ancestors would not fit. */
export function fittedTo(w: GoalWriteWithRollups, txItems: number): GoalWriteWithRollups {
  if (!w.synced || txItems + 1 + w.ancestors.length + w.checks.length <= MAX_TRANSACTION_ITEMS) return w;
  // the goal as decided: the mark it had before (never the version this write makes)
  return {
    before: w.before,
    goal: { ...w.goal, rollup_synced_v: w.before?.record.rollup_synced_v ?? null },
    ancestors: [],
    checks: [],
    synced: false,
  };
}
