/** Goal archive and unarchive (extension): read the goal, decide (decide.ts), one write. */
import { canWriteContent } from '#shared/auth/caller.ts';
import { runCommand } from '#shared/command/run.ts';
import { getEntity } from '#shared/db/reads.ts';
import { refuse } from '#shared/decision.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import { decideArchive, editRefusal, goalNotFound } from '#shared/domain/goals/decide.ts';
import { goalEntity, type GoalKind } from '#shared/domain/goals/entity.ts';
import { refreshRollupsAfterWrite } from '#shared/domain/goals/rollup-writes.ts';
import type { GoalView } from '#shared/domain/goals/service.ts';

/** Sets (archive) or clears (unarchive) archived_at/archived_by_uuid; doing it twice changes nothing. */
export async function setArchived(ctx: DomainCtx, kind: GoalKind, id: string, archived: boolean): Promise<GoalView> {
  const actor = { userUuid: ctx.caller.userId, canWriteContent: canWriteContent(ctx.caller) };
  return runCommand(ctx, {
    read: async () => {
      const stored = await getEntity(ctx, goalEntity, id, true);
      return stored && { stored, access: await goalAccess(ctx, stored.record) };
    },
    decide: (seen, now) => (seen ? decideArchive(kind, seen, archived, actor, now) : refuse(goalNotFound(kind, id))),
    write: (tx, next, seen) => {
      if (next) tx.replace(goalEntity, seen!.stored, next);
      return { before: seen!.stored.record, after: next ?? seen!.stored.record };
    },
    after: async ({ before, after }) => {
      // archived children leave their parents' rollup
      if (after !== before) await refreshRollupsAfterWrite(ctx, [after]);
      return { goal: after, access: await goalAccess(ctx, after) };
    },
  });
}

/** The permission check of archive and unarchive on its own (a replayed request's gate): 404, or 403 / 422 as decideArchive. */
export async function authorizeSetArchived(ctx: DomainCtx, kind: GoalKind, id: string): Promise<void> {
  const stored = await getEntity(ctx, goalEntity, id);
  if (!stored) throw goalNotFound(kind, id);
  const refusal = editRefusal(kind, stored.record, await goalAccess(ctx, stored.record));
  if (refusal) throw refusal;
}
