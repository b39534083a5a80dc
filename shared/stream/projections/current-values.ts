import type { Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { replaceOp } from '#shared/db/tx-ops.ts';
import { checkinEntity, type CheckinRecord } from '#shared/domain/checkins/entity.ts';
import { goalRepair } from '#shared/domain/checkins/decide.ts';
import { newestOf } from '#shared/domain/checkins/service.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { entityRecord } from '#shared/stream/changes.ts';
import type { Projection } from '#shared/stream/projection.ts';
import type { TableChange } from '#shared/table-change.ts';

const checkinOf = (change: TableChange) =>
  entityRecord<CheckinRecord>(change, 'checkin', 'new') ?? entityRecord<CheckinRecord>(change, 'checkin', 'old');

/** The goal's latest check-in now: the head of its order partition (strongly consistent), then its record. */
async function latestCheckin(ctx: DataCtx, goalUuid: string): Promise<CheckinRecord | undefined> {
  const [head] = await newestOf(ctx, goalUuid, 1);
  return head ? (await getEntity(ctx, checkinEntity, head.id, true))?.record : undefined;
}

/** The goal as read, and its latest check-in read after it (a check-in committed between the two moves the goal's version). */
export interface CurrentValuesState {
  goal: Stored<GoalRecord> | undefined;
  latest: CheckinRecord | undefined;
}

/**
 * A goal's current values from its latest check-in, from the change stream. The request path writes the
 * goal in the check-in's own transaction, so this normally finds nothing to do; it repairs a goal written
 * any other way (an import, an operator fix, a bug) and makes "current = latest check-in" an invariant
 * rather than a habit. What the goal should hold is the domain's (pure: checkins/decide.ts goalRepair).
 * Idempotent: it computes from the check-ins as they are now, writes only a difference, conditioned on the
 * goal's version (a concurrent check-in write makes it read again); a goal deleted since is left alone.
 */
export const currentValuesProjection: Projection<CurrentValuesState> = {
  name: 'current-values',
  accepts: (change) => checkinOf(change) !== undefined,
  async reads(change, data) {
    const uuid = checkinOf(change)!.goal_uuid;
    const goal = await getEntity(data, goalEntity, uuid, true);
    return { goal, latest: goal ? await latestCheckin(data, uuid) : undefined };
  },
  project(_change, { goal, latest }, now) {
    const next = goal && goalRepair(goal.record, latest, now);
    return next ? { transactions: [[replaceOp(goalEntity, goal, next)]] } : {};
  },
};
