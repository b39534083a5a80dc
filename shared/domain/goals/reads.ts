/** What goal writes check at commit about what they read (the read plans are in create.ts and update.ts), and a goal read with the caller's access. */
import type { Stored } from '#shared/db/model.ts';
import { getEntity } from '#shared/db/reads.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { requireGoalEditor, requireViewer } from '#shared/domain/goals/access.ts';
import type { GoalAccess } from '#shared/domain/goals/refusals.ts';
import { goalEntity, type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { NotFoundError, type AppError } from '#shared/errors.ts';

/**
 * New parents must be as read when the goal's write commits: a concurrent write that deletes a parent or
 * links it below this goal (a two-goal cycle) then conflicts, and the retry reads it again and refuses.
 */
export function requireUnchanged(tx: WriteTx, parents: Iterable<Stored<GoalRecord>>): void {
  for (const s of parents) tx.checkVersion(goalEntity, s);
}

/**
 * What reading one goal needs first, for the route's read-ahead: the goal item (batched with the caller's
 * user) and the caller's teams (visibility of a limited goal), so a get is one round trip in sequence.
 */
export const goalReadAhead = (params: Record<string, string>) => ({
  entities: params.id ? [{ type: goalEntity.type, id: params.id }] : [],
  teams: true,
});

/** 404 when the goal is not in the caller's tenant (or, with `kind`, is a goal of another kind: `/key_results/{uuid of an objective}` does not exist). */
async function storedGoal(ctx: DomainCtx, uuid: string, kind: GoalKind | undefined) {
  const stored = await getEntity(ctx, goalEntity, uuid);
  if (!stored || (kind && stored.record.type !== kind)) throw new NotFoundError(kind ? kind.replace('_', ' ') : 'Goal', uuid);
  return stored;
}

/** Reads a goal the caller may see: 404 as storedGoal, 403 when it is there but not visible. */
export async function readableGoal(
  ctx: DomainCtx,
  uuid: string,
  kind?: GoalKind,
): Promise<{ goal: GoalRecord; version: number; access: GoalAccess }> {
  const { record, version } = await storedGoal(ctx, uuid, kind);
  return { goal: record, version, access: await requireViewer(ctx, record) };
}

/**
 * The permission check of a write on a goal a body names (check-in, data source), on its own: 403 unless the
 * caller may change it, `hidden()` (422) when it is unknown or invisible to the caller.
 */
export async function requireNamedGoalEditor(ctx: DomainCtx, uuid: string, hidden: () => AppError): Promise<void> {
  const stored = await getEntity(ctx, goalEntity, uuid.toLowerCase());
  if (!stored) throw hidden();
  await requireGoalEditor(ctx, stored.record, hidden);
}
