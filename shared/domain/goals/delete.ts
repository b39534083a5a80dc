/** Goal delete (soft), with the including_immediate_* and delete_hierarchy flags: one transaction, all or nothing. */
import { getEntities, nowIso, retryOnConflict, WriteTx } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { editableGoal, goalAccess } from '#shared/domain/goals/access.ts';
import { goalEntity, GOAL_KINDS, type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { childEntriesOfKind, walkDescendants } from '#shared/domain/goals/hierarchy.ts';
import { refreshRollups } from '#shared/domain/goals/progress.ts';
import { ForbiddenError } from '#shared/errors.ts';
import { assertFits, IMMEDIATE_FLAGS, MAX_TX_ITEMS, tooMany } from '#shared/domain/goals/rules.ts';
import { type GoalDeleteInput } from '#shared/domain/goals/service.ts';

/**
 * Contract 6: a soft delete. The flags add the direct children of a kind, or (delete_hierarchy) every
 * descendant. The caller must be allowed to change each goal discarded (403 naming the first it may not);
 * goals already deleted are left as they are. All in one transaction: a hierarchy that does not fit is
 * refused with 422 too_many and nothing is deleted. Returns the goal as stored after the delete.
 */
export async function deleteGoal(ctx: DomainCtx, kind: GoalKind, id: string, input: GoalDeleteInput): Promise<GoalRecord> {
  const result = await retryOnConflict(async () => {
    const { goal, version } = await editableGoal(ctx, id, kind);
    const others = new Set<string>();
    if (input.delete_hierarchy) {
      // each discarded goal is at least two items (the goal and its re-enveloped entries): 100 descendants never fit
      const walk = await walkDescendants(ctx, [id], { limit: MAX_TX_ITEMS });
      if (walk.truncated) throw tooMany('delete_hierarchy');
      walk.ids.forEach((c) => others.add(c));
    }
    const kinds = GOAL_KINDS.filter((k) => input[IMMEDIATE_FLAGS[k]]);
    for (const entries of await Promise.all(kinds.map((k) => childEntriesOfKind(ctx, k, id)))) entries.forEach((e) => others.add(e.id));
    others.delete(id);

    const stored = await getEntities(ctx, goalEntity, others);
    stored.set(id, { record: goal, version });
    const now = nowIso();
    const tx = new WriteTx(ctx);
    const discarded: GoalRecord[] = [];
    for (const gid of [id, ...others]) {
      const s = stored.get(gid);
      if (!s || s.record.discarded_at) continue;
      if (gid !== id) {
        const access = await goalAccess(ctx, s.record);
        // a goal the caller cannot see is not named (contract 5): its uuid would reveal it
        if (!access.canEdit) throw new ForbiddenError(access.canView ? `You cannot delete ${s.record.type.replace('_', ' ')} ${gid} of this hierarchy` : 'You cannot delete every goal of this hierarchy');
      }
      const next = { ...s.record, discarded_at: now, discarded_by_uuid: ctx.caller.userId, updated_at: now };
      tx.replace(goalEntity, s, next);
      discarded.push(next);
    }
    assertFits(tx.size, () => (input.delete_hierarchy ? 'delete_hierarchy' : IMMEDIATE_FLAGS[kinds[0] ?? kind]));
    await tx.commit();
    return { goal: discarded.find((g) => g.uuid === id) ?? goal, discarded };
  });
  if (result.discarded.length) await refreshRollups(ctx, result.discarded);
  return result.goal;
}
