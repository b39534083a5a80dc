/** Goal archive and unarchive (extension): read the goal and its rollup ancestors, decide (decide.ts, rollup-plan.ts), one write. */
import { canWriteContent } from '#shared/auth/caller.ts';
import { runCommand } from '#shared/command/run.ts';
import { getEntity } from '#shared/db/reads.ts';
import { accept, refuse } from '#shared/decision.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import { decideArchive, editRefusal, goalNotFound } from '#shared/domain/goals/decide.ts';
import { goalEntity, type GoalKind } from '#shared/domain/goals/entity.ts';
import { fittedTo, planGoalWrite } from '#shared/domain/goals/rollup-plan.ts';
import { addGoalWrite, readAncestors, refreshRollupsAfterWrite } from '#shared/domain/goals/rollup-writes.ts';
import type { GoalView } from '#shared/domain/goals/service.ts';

/**
 * Sets (archive) or clears (unarchive) archived_at/archived_by_uuid; doing it twice changes nothing. Read once (the
 * goal, then the caller's access beside its rollup ancestors), decide once (decideArchive, then the goal leaving or
 * rejoining its parents' rollups by deltas: planGoalWrite), write once.
 */
export async function setArchived(ctx: DomainCtx, kind: GoalKind, id: string, archived: boolean): Promise<GoalView> {
  const actor = { userUuid: ctx.caller.userId, canWriteContent: canWriteContent(ctx.caller) };
  return runCommand(ctx, {
    read: async () => {
      const stored = await getEntity(ctx, goalEntity, id, true);
      if (!stored) return undefined;
      const [access, ancestors] = await Promise.all([goalAccess(ctx, stored.record), readAncestors(ctx, [stored.record])]);
      return { stored, access, ancestors };
    },
    decide: (seen, now) => {
      if (!seen) return refuse(goalNotFound(kind, id));
      const d = decideArchive(kind, seen, archived, actor, now);
      if ('error' in d) return d;
      // archived children leave their parents' rollup, and rejoin it unarchived
      return accept({ before: seen.stored, rollups: d.write && planGoalWrite(seen.stored, d.write, seen.ancestors, now) });
    },
    write: (tx, d) => {
      if (!d.rollups) return { goal: d.before.record, synced: true };
      const rollups = fittedTo(d.rollups, tx.size);
      addGoalWrite(tx, rollups);
      return { goal: rollups.goal, synced: rollups.synced };
    },
    after: async ({ goal, synced }) => {
      if (!synced) await refreshRollupsAfterWrite(ctx, [goal]);
      return { goal, access: await goalAccess(ctx, goal) };
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
