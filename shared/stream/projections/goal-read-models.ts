import { entityRecord } from '#shared/stream/changes.ts';
import type { Projection } from '#shared/stream/projection.ts';
import type { TableChange } from '#shared/table-change.ts';
import { markNewTenantReady, syncGoalReadModels } from '#shared/read-models/goal-sync.ts';
import { desiredEntries, fingerprint } from '#shared/read-models/goal-entries.ts';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';

const goalOf = (change: TableChange, which: 'old' | 'new') => entityRecord<GoalRecord>(change, 'goal', which);

/** Whether the change moved anything a read model holds (most goal writes, e.g. a title edit, move none). */
function movesReadModels(change: TableChange): boolean {
  const before = goalOf(change, 'old');
  const after = goalOf(change, 'new');
  if (!before && !after) return false;
  const shape = (g: GoalRecord | undefined) => JSON.stringify(desiredEntries(change.tenantId, g).map(fingerprint));
  return !before || !after || shape(before) !== shape(after);
}

const isNewTenant = (change: TableChange) => change.eventName === 'INSERT' && entityRecord(change, 'tenant', 'new') !== undefined;

/**
 * The goal read models (composite list entries and exact counters, docs/data-model.md "Read models") from the
 * change stream: every goal change that moves one syncs that goal from the table as it is now
 * (read-models/goal-sync.ts: idempotent, conditioned on the entries and the goal version read). A tenant
 * created after this projection exists has every goal change pass here, so its read models are complete from
 * the start: its create marks it ready (here only if a create from before that did not); older tenants become
 * ready through the backfill.
 */
export const goalReadModelsProjection: Projection = {
  name: 'goal-read-models',
  accepts: (change) => isNewTenant(change) || movesReadModels(change),
  async apply(change, ctx) {
    if (isNewTenant(change)) return markNewTenantReady(ctx.data);
    await syncGoalReadModels(ctx.data, (goalOf(change, 'new') ?? goalOf(change, 'old'))!.uuid);
  },
};
