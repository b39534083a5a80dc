import { nowIso } from '#shared/clock.ts';
import { mutateEntity } from '#shared/command/run.ts';
import type { DataCtx } from '#shared/db/model.ts';
import { getEntity } from '#shared/db/reads.ts';
import { checkinEntity, type CheckinRecord } from '#shared/domain/checkins/entity.ts';
import { goalRepair } from '#shared/domain/checkins/decide.ts';
import { newestOf } from '#shared/domain/checkins/service.ts';
import { goalEntity } from '#shared/domain/goals/entity.ts';
import { NotFoundError } from '#shared/errors.ts';
import { entityRecord } from '#shared/stream/changes.ts';
import type { Projection } from '#shared/stream/projection.ts';

/** The goal's latest check-in now: the head of its order partition (strongly consistent), then its record. */
async function latestCheckin(ctx: DataCtx, goalUuid: string): Promise<CheckinRecord | undefined> {
  const [head] = await newestOf(ctx, goalUuid, 1);
  return head ? (await getEntity(ctx, checkinEntity, head.id, true))?.record : undefined;
}

/**
 * A goal's current values from its latest check-in, from the change stream. The request path writes the
 * goal in the check-in's own transaction, so this normally finds nothing to do; it repairs a goal written
 * any other way (an import, an operator fix, a bug) and makes "current = latest check-in" an invariant
 * rather than a habit. Only the reads and the write are here; what the goal should hold is the domain's
 * (pure: checkins/decide.ts goalRepair). Idempotent: it computes from the check-ins as they are now, writes
 * only a difference, conditioned on the goal's version (a concurrent check-in write makes it read again).
 */
export const currentValuesProjection: Projection = {
  name: 'current-values',
  accepts: (change) =>
    (entityRecord<CheckinRecord>(change, 'checkin', 'new') ?? entityRecord<CheckinRecord>(change, 'checkin', 'old')) !== undefined,
  async apply(change, ctx) {
    const checkin = (entityRecord<CheckinRecord>(change, 'checkin', 'new') ?? entityRecord<CheckinRecord>(change, 'checkin', 'old'))!;
    // mutateEntity retries a lost race within the one budget (shared/command/run.ts)
    await mutateEntity(
      ctx.data,
      goalEntity,
      checkin.goal_uuid,
      async (goal) => goalRepair(goal.record, await latestCheckin(ctx.data, checkin.goal_uuid), nowIso()),
      () => new NotFoundError('Goal', checkin.goal_uuid),
    ).catch((err) => {
      if (!(err instanceof NotFoundError)) throw err; // the goal was deleted since: nothing follows any more
    });
  },
};
