/** What goal writes check at commit about what they read (the read plans are in create.ts and update.ts). */
import { WriteTx, type Stored } from '#shared/db/store.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';

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
export const goalReadAhead = (params: Record<string, string>) => ({ entities: params.id ? [{ type: goalEntity.type, id: params.id }] : [], teams: true });
