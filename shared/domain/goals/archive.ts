/** Goal archive and unarchive (extension). */
import { mutateEntity, nowIso } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import { goalEntity, type GoalKind } from '#shared/domain/goals/entity.ts';
import { refreshRollups } from '#shared/domain/goals/progress.ts';
import { notFound, requireEditable, type GoalView } from '#shared/domain/goals/service.ts';

// ---------- archive (extension) ----------

/** Sets (archive) or clears (unarchive) archived_at/archived_by_uuid; doing it twice changes nothing. */
export async function setArchived(ctx: DomainCtx, kind: GoalKind, id: string, archived: boolean): Promise<GoalView> {
  const { before, after } = await mutateEntity(
    ctx,
    goalEntity,
    id,
    async (current) => {
      const g = current.record;
      await requireEditable(ctx, kind, g);
      if (!!g.archived_at === archived) return undefined;
      const now = nowIso();
      return { ...g, archived_at: archived ? now : null, archived_by_uuid: archived ? ctx.caller.userId : null, updated_at: now };
    },
    () => notFound(kind, id),
  );
  // archived children leave their parents' rollup
  if (after !== before.record) await refreshRollups(ctx, [after]);
  return { goal: after, access: await goalAccess(ctx, after) };
}

