import { keys } from '#shared/db/keys.ts';
import { getSide } from '#shared/db/side-items.ts';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import { desiredEntries, fingerprint } from '#shared/read-models/goal-entries.ts';
import { newTenantReadyOp, planGoalSync, readGoalSync, type GoalChange } from '#shared/read-models/goal-sync.ts';
import { entityRecord } from '#shared/stream/changes.ts';
import type { Projection } from '#shared/stream/projection.ts';
import type { TableChange } from '#shared/table-change.ts';

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

/** A new tenant's readiness marker as read, or the goal's pending read-model change (none when its entries are as they should be). */
export type GoalReadModelsState = { marked: boolean } | { changes: GoalChange[] };

/**
 * The goal read models (composite list entries and exact counters, docs/data-model.md "Read models") from the
 * change stream: every goal change that moves one syncs that goal from the table as it is now (reads
 * `readGoalSync`: the goal and its entries, strongly consistent; projects `planGoalSync`, pure: each entry that
 * differs, conditioned on the entry as read, with its counters, the goal checked at the version read). A tenant
 * created after this projection exists has every goal change pass here, so its read models are complete from
 * the start: its create marks it ready (here only if a create from before that did not, conditioned on the
 * marker's absence); older tenants become ready through the backfill.
 */
export const goalReadModelsProjection: Projection<GoalReadModelsState> = {
  name: 'goal-read-models',
  accepts: (change) => isNewTenant(change) || movesReadModels(change),
  async reads(change, data) {
    if (isNewTenant(change)) return { marked: (await getSide(data, keys.readModelState(data.tenantId))) !== undefined };
    return { changes: await readGoalSync(data, [(goalOf(change, 'new') ?? goalOf(change, 'old'))!.uuid]) };
  },
  project(change, state, now) {
    if ('marked' in state) return state.marked ? {} : { transactions: [[newTenantReadyOp(change.tenantId, now)]] };
    return { transactions: planGoalSync(change.tenantId, state.changes) };
  },
};
