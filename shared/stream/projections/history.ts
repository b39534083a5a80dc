import { putSideOp } from '#shared/db/tx-ops.ts';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import { historyPoint } from '#shared/domain/history/cause.ts';
import { historyKey } from '#shared/domain/history/entity.ts';
import { entityRecord, versionOf } from '#shared/stream/changes.ts';
import type { Projection } from '#shared/stream/projection.ts';

/**
 * Goal history (contract 13): every committed change of a goal item that moved its value, progress or
 * status becomes one history item in the goal's partition, keyed by the goal version that made it. Written
 * from the stream, so every writer counts, the stream's own rollup repair included. It reads nothing: the
 * point is the change's own. Idempotent: a redelivered change puts the same item at the same key
 * (unconditioned: there is no failed condition to answer); changes of one goal arriving out of order still
 * land at their own versions, so the list reads in commit order.
 */
export const historyProjection: Projection<undefined> = {
  name: 'history',
  accepts: (c) => c.eventName === 'MODIFY' && entityRecord<GoalRecord>(c, 'goal', 'new') !== undefined,
  reads: async () => undefined,
  project(change) {
    const goal = entityRecord<GoalRecord>(change, 'goal', 'new');
    const point = historyPoint(entityRecord<GoalRecord>(change, 'goal', 'old'), goal, change.at);
    const version = versionOf(change.newImage);
    if (!point || !goal || !version) return {};
    return {
      transactions: [
        [putSideOp(historyKey(change.tenantId, goal.uuid, version), { kind: 'history', id: goal.uuid, v: version, rec: point })],
      ],
    };
  },
};
