import { ENTITY_SK } from '#shared/db/keys.ts';
import { WriteTx } from '#shared/db/store.ts';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import { historyPoint } from '#shared/domain/history/cause.ts';
import { historyKey } from '#shared/domain/history/entity.ts';
import type { Projection, TableChange } from '#shared/stream/projection.ts';

const isGoalItem = (c: TableChange) => c.keys.SK === ENTITY_SK && c.keys.PK.startsWith(`T#${c.tenantId}#goal#`);
const recOf = (image: Record<string, unknown> | undefined) => image?.rec as GoalRecord | undefined;

/**
 * Goal history (contract 13): every committed change of a goal item that moved its value, progress or
 * status becomes one history item in the goal's partition, keyed by the goal version that made it. Written
 * from the stream, so every writer counts, the stream's own rollup repair included. Idempotent: a
 * redelivered change puts the same item at the same key; changes of one goal arriving out of order still
 * land at their own versions, so the list reads in commit order.
 */
export const historyProjection: Projection = {
  name: 'history',
  accepts: (c) => c.eventName === 'MODIFY' && isGoalItem(c),
  async apply(change, ctx) {
    const point = historyPoint(recOf(change.oldImage), recOf(change.newImage), change.at);
    const version = change.newImage?.v;
    if (!point || typeof version !== 'number') return;
    const goal = recOf(change.newImage)!;
    await new WriteTx(ctx.data).putSide(historyKey(ctx.data.tenantId, goal.uuid, version), { kind: 'history', id: goal.uuid, v: version, rec: point }).commit();
  },
};
