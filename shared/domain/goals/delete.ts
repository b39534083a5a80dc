/** Goal delete (soft), with the including_immediate_* and delete_hierarchy flags: read, decide (decide.ts), one transaction, all or nothing. */
import { canWriteContent } from '#shared/auth/caller.ts';
import { runCommand } from '#shared/command/run.ts';
import type { Stored } from '#shared/db/model.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { refuse } from '#shared/decision.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import type { GoalDeleteCommand } from '#shared/domain/goals/commands.ts';
import { decideDelete, deleteBlame, goalNotFound, immediateKinds, type SeenGoal } from '#shared/domain/goals/decide.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import { goalEntity, type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { childEntriesOfKind, walkDescendants } from '#shared/domain/goals/hierarchy.ts';
import { refreshRollupsAfterWrite } from '#shared/domain/goals/rollup-writes.ts';
import { MAX_TX_ITEMS } from '#shared/domain/goals/rules.ts';

const seen = async (ctx: DomainCtx, stored: Stored<GoalRecord>): Promise<SeenGoal> => ({
  stored,
  access: await goalAccess(ctx, stored.record),
});

/**
 * Read plan: the goal and, in the same round, the ids the flags add (the child index of each flagged kind,
 * or the walk of every descendant, stopped at a transaction's size); then those goals in one batch.
 */
async function readDelete(ctx: DomainCtx, _kind: GoalKind, id: string, input: GoalDeleteCommand) {
  const [target, walk, children] = await Promise.all([
    getEntity(ctx, goalEntity, id),
    // each discarded goal is at least two items (the goal and its re-enveloped entries): 100 descendants never fit
    input.delete_hierarchy ? walkDescendants(ctx, [id], { limit: MAX_TX_ITEMS }) : undefined,
    Promise.all(immediateKinds(input).map((k) => childEntriesOfKind(ctx, k, id))),
  ]);
  if (!target) return undefined;
  const ids = new Set<string>([...(walk?.ids ?? []), ...children.flat().map((e) => e.id)]);
  ids.delete(id);
  const stored = ids.size ? await getEntities(ctx, goalEntity, ids) : new Map();
  const goals = await Promise.all([...ids].flatMap((i) => (stored.has(i) ? [seen(ctx, stored.get(i)!)] : [])));
  return { target: await seen(ctx, target), others: { goals, truncated: walk?.truncated ?? false } };
}

/**
 * Contract 6: a soft delete. The flags add the direct children of a kind, or (delete_hierarchy) every
 * descendant; all in one transaction (decideDelete has the rules). Returns the goal as stored after the delete.
 */
export async function deleteGoal(ctx: DomainCtx, kind: GoalKind, id: string, input: GoalDeleteCommand): Promise<GoalRecord> {
  const actor = { userUuid: ctx.caller.userId, canWriteContent: canWriteContent(ctx.caller) };
  return runCommand(ctx, {
    read: () => readDelete(ctx, kind, id, input),
    decide: (read, now) => (read ? decideDelete(kind, input, read.target, read.others, actor, now) : refuse(goalNotFound(kind, id))),
    write: (tx, discarded, read) => {
      for (const d of discarded) tx.replace(goalEntity, d.before, d.after);
      tx.blame(deleteBlame(kind, input)).assertFits();
      return {
        goal: discarded.find((d) => d.after.uuid === id)?.after ?? read!.target.stored.record,
        discarded: discarded.map((d) => d.after),
      };
    },
    after: async ({ goal, discarded }) => {
      if (discarded.length) await refreshRollupsAfterWrite(ctx, discarded);
      return goal;
    },
  });
}
