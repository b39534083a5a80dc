/**
 * Goals (objectives, key results, initiatives): the shared types and reads. One implementation for the three kinds; the
 * kind comes from the route. Decisions are listed in shared/domain/goals/README.md.
 *
 * Every write is one TransactWriteItems: the goal item, its index entries, its short_id claim, the labels
 * it creates, and condition checks on what it references. A write that would need more than 100 items is
 * refused (422 too_many) rather than split, so nothing is ever half-applied.
 *
 * One file per command: create.ts, update.ts, delete.ts, archive.ts; rules.ts holds the pure rules and
 * reads.ts what the commands read before they decide.
 */
import type { DomainCtx } from '#shared/domain/context.ts';
import { readableGoal, requireGoalEditor, type GoalAccess } from '#shared/domain/goals/access.ts';
import { type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { NotFoundError, ValidationError } from '#shared/errors.ts';
import type { GoalCreateCommand, GoalDeleteCommand, GoalUpdateCommand } from '#shared/domain/goals/commands.ts';

export type GoalCreateInput = GoalCreateCommand;
export type GoalUpdateInput = GoalUpdateCommand;
export type GoalDeleteInput = GoalDeleteCommand;

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

/**
 * Same answers as readableGoal/editableGoal, on a record already read inside a write's read-modify-write
 * loop (so the goal item is read once): 404 other kind, 403 not visible or not editable, 422 deleted.
 */
export async function requireEditable(ctx: DomainCtx, kind: GoalKind, g: GoalRecord): Promise<GoalAccess> {
  if (g.type !== kind) throw notFound(kind, g.uuid);
  const access = await requireGoalEditor(ctx, g);
  if (g.discarded_at) throw ValidationError.field('discarded_at', 'discarded', 'This goal is deleted; it cannot be changed');
  return access;
}

export const notFound = (kind: GoalKind, id: string) => new NotFoundError(kind.replace('_', ' '), id);

export { createGoal } from '#shared/domain/goals/create.ts';
export { updateGoal } from '#shared/domain/goals/update.ts';
export { deleteGoal } from '#shared/domain/goals/delete.ts';
export { setArchived } from '#shared/domain/goals/archive.ts';
