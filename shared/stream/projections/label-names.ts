import type { EntryList } from '#shared/db/entry-lists.ts';
import { entriesOf } from '#shared/db/index-queries.ts';
import type { BaseRecord, EntityDef, Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { replaceOp } from '#shared/db/tx-ops.ts';
import { checkinEntity, checkinsByLabel, type CheckinRecord } from '#shared/domain/checkins/entity.ts';
import { checkinListsOf } from '#shared/domain/checkins/list-shards.ts';
import { GOAL_KINDS, goalEntity, goalsByLabel, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { decideLabelSync, labelNameChanged, labelsMayBeStale, type Labelled } from '#shared/domain/labels/decide.ts';
import { labelEntity, type LabelRecord } from '#shared/domain/labels/entity.ts';
import { entityRecord } from '#shared/stream/changes.ts';
import type { Projection, ProjectionWrites, Step } from '#shared/stream/projection.ts';
import type { TableChange } from '#shared/table-change.ts';

/** Records synced at once by one label's fan-out. */
const FAN_OUT_CONCURRENCY = 8;

const labelOf = (change: TableChange, which: 'old' | 'new') => entityRecord<LabelRecord>(change, labelEntity.type, which);
const goalOf = (change: TableChange, which: 'old' | 'new') => entityRecord<GoalRecord>(change, goalEntity.type, which);
const checkinOf = (change: TableChange, which: 'old' | 'new') => entityRecord<CheckinRecord>(change, checkinEntity.type, which);

type LabelledRecord = BaseRecord & Labelled;

/** A goal or check-in as read, with its labels as they are now (strongly consistent), or undefined when it is gone. */
export type LabelSyncState<R extends LabelledRecord> = { record: Stored<R>; labels: Map<string, LabelRecord> } | undefined;

/**
 * The names a goal or check-in keeps (`labels`) brought up to date with its labels as they are now: writes only a
 * difference (decideLabelSync), conditioned on the version read (a concurrent write makes it read again; a record
 * gone since is left alone). The record's `updated_at` is kept: a label's rename is not a change of the goal.
 */
export function projectLabelSync<R extends LabelledRecord>(def: EntityDef<R>, state: LabelSyncState<R>): ProjectionWrites {
  if (!state) return {};
  const next = decideLabelSync(state.record.record, state.labels);
  return next === undefined ? {} : { transactions: [[replaceOp(def, state.record, { ...state.record.record, labels: next })]] };
}

async function readLabelSync<R extends LabelledRecord>(data: DataCtx, def: EntityDef<R>, id: string): Promise<LabelSyncState<R>> {
  const record = await getEntity(data, def, id, true);
  if (!record) return undefined; // deleted since (a check-in, or an entry the index still shows)
  const labels = await getEntities(data, labelEntity, record.record.label_uuids, true);
  return { record, labels: new Map([...labels].map(([uuid, s]) => [uuid, s.record])) };
}

/** One goal's or check-in's label names synced, as a step of its own (the fan-out's, the backfill's). */
export const labelSyncStep = <R extends LabelledRecord>(def: EntityDef<R>, id: string): Step<LabelSyncState<R>> => ({
  reads: (data) => readLabelSync(data, def, id),
  project: (state) => projectLabelSync(def, state),
});

/** The uuids of one entry list value, every page. */
async function idsIn(data: DataCtx, list: EntryList, value: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of entriesOf(data, list, value)) ids.push(e.id);
  return ids;
}

/** Every goal (each kind's entry list) and check-in (each shard's) naming a label, through their `label` entries. */
async function holdersOf(data: DataCtx, labelUuid: string): Promise<{ goals: string[]; checkins: string[] }> {
  const [goals, checkins] = await Promise.all([
    Promise.all(GOAL_KINDS.map((k) => idsIn(data, goalsByLabel(k), labelUuid))),
    checkinListsOf(data).then((shards) => Promise.all(shards.map((shard) => idsIn(data, checkinsByLabel(shard), labelUuid)))),
  ]);
  return { goals: goals.flat(), checkins: checkins.flat() };
}

/** A label's holders (a rename or delete), or the one goal or check-in written (read as its sync reads it). */
export type LabelNamesState =
  | { label: string; holders: { goals: string[]; checkins: string[] } }
  | { goal: LabelSyncState<GoalRecord> }
  | { checkin: LabelSyncState<CheckinRecord> };

/**
 * Label names on goals and check-ins, from the change stream. The request path writes the names a command
 * read or created with the record (read-your-writes for the writer); a label's rename or delete reaches the
 * goals and check-ins that name it here, some time after (the contract does not say how soon):
 *  - a label renamed (any spelling) or deleted: every goal and check-in naming it (their `label` entry lists,
 *    each kind and shard) is synced, each a step of its own (`labelSyncStep`, 8 at once);
 *  - a goal or check-in written with labels, with other labels or names, or naming labels without keeping
 *    names (written before they were kept): that record is synced. This closes the race of a command that read
 *    a label's name before a rename and committed after the rename's fan-out had passed, and names old records
 *    on their first change.
 * Idempotent and order-insensitive: each sync reads the record and its labels as they are now and writes only a
 * difference, conditioned on the record's version, so replays, duplicates and reordering converge (and a
 * fan-out's own write, checked once more, writes nothing). Bound: a rename writes each record naming the label
 * once (8 at a time); a label on very many records takes its stream record that long (a retry after a timeout
 * skips what is already synced).
 */
export const labelNamesProjection: Projection<LabelNamesState> = {
  name: 'label-names',
  accepts(change) {
    const [lb, la] = [labelOf(change, 'old'), labelOf(change, 'new')];
    if (lb || la) return labelNameChanged(lb, la);
    const [gb, ga] = [goalOf(change, 'old'), goalOf(change, 'new')];
    if (gb || ga) return labelsMayBeStale(gb, ga);
    return labelsMayBeStale(checkinOf(change, 'old'), checkinOf(change, 'new'));
  },
  async reads(change, data) {
    const label = labelOf(change, 'old') ?? labelOf(change, 'new');
    if (label) return { label: label.uuid, holders: await holdersOf(data, label.uuid) };
    const goal = goalOf(change, 'new');
    if (goal) return { goal: await readLabelSync(data, goalEntity, goal.uuid) };
    return { checkin: await readLabelSync(data, checkinEntity, checkinOf(change, 'new')!.uuid) };
  },
  project(_change, state) {
    if ('goal' in state) return projectLabelSync(goalEntity, state.goal);
    if ('checkin' in state) return projectLabelSync(checkinEntity, state.checkin);
    const { goals, checkins } = state.holders;
    return {
      steps: [...goals.map((id) => labelSyncStep(goalEntity, id)), ...checkins.map((id) => labelSyncStep(checkinEntity, id))],
      concurrency: FAN_OUT_CONCURRENCY,
      log: { message: 'label names', fields: { label_uuid: state.label, holders: goals.length + checkins.length }, count: 'synced' },
    };
  },
};
