/** Goal archive and unarchive (extension): read the goal, decide (decide.ts), one write. */
import { canWriteContent } from '#shared/auth/caller.ts';
import { nowIso } from '#shared/clock.ts';
import { retryOnConflict } from '#shared/db/commands.ts';
import { getEntity } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import { decideArchive, decided, editRefusal, goalNotFound } from '#shared/domain/goals/decide.ts';
import { goalEntity, type GoalKind } from '#shared/domain/goals/entity.ts';
import { refreshRollups } from '#shared/domain/goals/rollup-writes.ts';
import type { GoalView } from '#shared/domain/goals/service.ts';

/** Sets (archive) or clears (unarchive) archived_at/archived_by_uuid; doing it twice changes nothing. */
export async function setArchived(ctx: DomainCtx, kind: GoalKind, id: string, archived: boolean): Promise<GoalView> {
  const actor = { userUuid: ctx.caller.userId, canWriteContent: canWriteContent(ctx.caller) };
  const { before, after } = await retryOnConflict(async () => {
    const stored = await getEntity(ctx, goalEntity, id, true);
    if (!stored) throw goalNotFound(kind, id);
    const next = decided(decideArchive(kind, { stored, access: await goalAccess(ctx, stored.record) }, archived, actor, nowIso()));
    if (next) await new WriteTx(ctx).replace(goalEntity, stored, next).commit();
    return { before: stored.record, after: next ?? stored.record };
  });
  // archived children leave their parents' rollup
  if (after !== before) await refreshRollups(ctx, [after]);
  return { goal: after, access: await goalAccess(ctx, after) };
}

/** The permission check of archive and unarchive on its own (a replayed request's gate): 404, or 403 / 422 as decideArchive. */
export async function authorizeSetArchived(ctx: DomainCtx, kind: GoalKind, id: string): Promise<void> {
  const stored = await getEntity(ctx, goalEntity, id);
  if (!stored) throw goalNotFound(kind, id);
  const refusal = editRefusal(kind, stored.record, await goalAccess(ctx, stored.record));
  if (refusal) throw refusal;
}
