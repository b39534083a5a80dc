/**
 * Goals (objectives, key results, initiatives): the shared types and reads. One implementation for the three kinds; the
 * kind comes from the route. Decisions are listed in shared/domain/goals/README.md.
 *
 * Every write is one TransactWriteItems: the goal item, its index entries, its short_id claim, the labels
 * it creates, and condition checks on what it references. A write that would need more than 100 items is
 * refused (422 too_many) rather than split, so nothing is ever half-applied.
 *
 * One file per command (create.ts, update.ts, delete.ts, archive.ts): each reads what it needs in as few
 * batched round trips as it can, decides in a pure function (decide.ts, on rules.ts), and commits one
 * transaction. commands.ts holds the commands' domain types.
 */
import type { DomainCtx } from '#shared/domain/context.ts';
import type { GoalAccess } from '#shared/domain/goals/refusals.ts';
import { readableGoal } from '#shared/domain/goals/reads.ts';
import type { GoalKind, GoalRecord } from '#shared/domain/goals/entity.ts';

/** A goal with what the caller may do with it (for `checks` and `access_source`). */
export interface GoalView {
  goal: GoalRecord;
  access: GoalAccess;
}

// ---------- reads ----------

export async function getGoal(ctx: DomainCtx, kind: GoalKind, id: string): Promise<GoalView> {
  const { goal, access } = await readableGoal(ctx, id, kind);
  return { goal, access };
}
