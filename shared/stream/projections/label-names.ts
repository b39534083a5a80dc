import { keys } from '#shared/db/keys.ts';
import { mutateEntity, runCommand } from '#shared/command/run.ts';
import type { EntryList } from '#shared/db/entry-lists.ts';
import { entriesOf, partitionEntries } from '#shared/db/index-queries.ts';
import type { BaseRecord, DataCtx, EntityDef } from '#shared/db/model.ts';
import { findClaims, getEntities, getEntity } from '#shared/db/reads.ts';
import { accept } from '#shared/decision.ts';
import { checkinEntity, checkinsByLabel, type CheckinRecord } from '#shared/domain/checkins/entity.ts';
import { checkinListsOf } from '#shared/domain/checkins/list-shards.ts';
import { GOAL_KINDS, goalEntity, goalsByLabel, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { decideLabelSync, labelNameChanged, labelsMayBeStale, type Labelled } from '#shared/domain/labels/decide.ts';
import { labelEntity, normalizeLabelName, type LabelRecord } from '#shared/domain/labels/entity.ts';
import { NotFoundError } from '#shared/errors.ts';
import { entityRecord } from '#shared/stream/changes.ts';
import type { Projection } from '#shared/stream/projection.ts';
import type { TableChange } from '#shared/table-change.ts';

/** Records synced at once by one label's fan-out. */
const FAN_OUT_CONCURRENCY = 8;

const labelOf = (change: TableChange, which: 'old' | 'new') => entityRecord<LabelRecord>(change, labelEntity.type, which);
const goalOf = (change: TableChange, which: 'old' | 'new') => entityRecord<GoalRecord>(change, goalEntity.type, which);
const checkinOf = (change: TableChange, which: 'old' | 'new') => entityRecord<CheckinRecord>(change, checkinEntity.type, which);

/**
 * Brings the names a goal or check-in keeps (`labels`) up to date with its labels as they are now: reads the
 * record and its labels strongly consistently, and writes only a difference, conditioned on the version read
 * (a concurrent write makes it read again; a record gone since is left alone). The record's `updated_at` is
 * kept: a label's rename is not a change of the goal.
 */
export async function syncLabelNames<R extends BaseRecord & Labelled>(data: DataCtx, def: EntityDef<R>, id: string): Promise<boolean> {
  let wrote = false;
  await mutateEntity(
    data,
    def,
    id,
    async (current) => {
      const labels = await getEntities(data, labelEntity, current.record.label_uuids, true);
      const next = decideLabelSync(current.record, new Map([...labels].map(([uuid, s]) => [uuid, s.record])));
      wrote = next !== undefined;
      return next === undefined ? undefined : { ...current.record, labels: next };
    },
    () => new NotFoundError(def.type, id),
  ).catch((err) => {
    if (!(err instanceof NotFoundError)) throw err; // deleted since (a check-in, or an entry the index still shows)
  });
  return wrote;
}

/** The uuids of one entry list value, every page. */
async function idsIn(data: DataCtx, list: EntryList, value: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of entriesOf(data, list, value)) ids.push(e.id);
  return ids;
}

/** Every goal (each kind's entry list) and check-in (each shard's) naming a label, through their `label` entries. */
async function holdersOf(data: DataCtx, labelUuid: string): Promise<Array<() => Promise<boolean>>> {
  const [goals, checkins] = await Promise.all([
    Promise.all(GOAL_KINDS.map((k) => idsIn(data, goalsByLabel(k), labelUuid))),
    checkinListsOf(data).then((shards) => Promise.all(shards.map((shard) => idsIn(data, checkinsByLabel(shard), labelUuid)))),
  ]);
  return [
    ...goals.flat().map((id) => () => syncLabelNames(data, goalEntity, id)),
    ...checkins.flat().map((id) => () => syncLabelNames(data, checkinEntity, id)),
  ];
}

/**
 * Label names on goals and check-ins, from the change stream. The request path writes the names a command
 * read or created with the record (read-your-writes for the writer); a label's rename or delete reaches the
 * goals and check-ins that name it here, some time after (the contract does not say how soon):
 *  - a label renamed (any spelling) or deleted: every goal and check-in naming it (their `label` entry lists,
 *    each kind and shard) is synced;
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
export const labelNamesProjection: Projection = {
  name: 'label-names',
  accepts(change) {
    const [lb, la] = [labelOf(change, 'old'), labelOf(change, 'new')];
    if (lb || la) return labelNameChanged(lb, la);
    const [gb, ga] = [goalOf(change, 'old'), goalOf(change, 'new')];
    if (gb || ga) return labelsMayBeStale(gb, ga);
    return labelsMayBeStale(checkinOf(change, 'old'), checkinOf(change, 'new'));
  },
  async apply(change, ctx) {
    const label = labelOf(change, 'old') ?? labelOf(change, 'new');
    if (label) {
      const holders = await holdersOf(ctx.data, label.uuid);
      let synced = 0;
      for (let i = 0; i < holders.length; i += FAN_OUT_CONCURRENCY) {
        const wrote = await Promise.all(holders.slice(i, i + FAN_OUT_CONCURRENCY).map((sync) => sync()));
        synced += wrote.filter(Boolean).length;
      }
      ctx.log.info('label names', { label_uuid: label.uuid, holders: holders.length, synced });
      return;
    }
    const goal = goalOf(change, 'new');
    if (goal) return void (await syncLabelNames(ctx.data, goalEntity, goal.uuid));
    const checkin = checkinOf(change, 'new');
    if (checkin) await syncLabelNames(ctx.data, checkinEntity, checkin.uuid);
  },
};

/** Runs `work` on every id `ids` yields, `concurrency` at a time; returns how many returned true. */
async function each(
  ids: AsyncIterable<{ id: string }>,
  concurrency: number,
  work: (id: string) => Promise<boolean>,
): Promise<{ seen: number; changed: number }> {
  const it = ids[Symbol.asyncIterator]();
  let seen = 0;
  let changed = 0;
  let pulling: Promise<unknown> = Promise.resolve();
  const next = () => (pulling = pulling.then(() => it.next())) as Promise<IteratorResult<{ id: string }>>;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let r = await next(); !r.done; r = await next()) {
        seen += 1;
        if (await work(r.value.id)) changed += 1;
      }
    }),
  );
  return { seen, changed };
}

/** A label's name claim written again with the name it carries, when it carries none or another spelling; true when written. */
async function claimWithName(data: DataCtx, uuid: string): Promise<boolean> {
  return runCommand(data, {
    read: async () => {
      const label = await getEntity(data, labelEntity, uuid, true);
      const claim = label && (await findClaims(data, 'label_name', [normalizeLabelName(label.record.name)], true)).values().next().value;
      return { label, claim };
    },
    decide: ({ label, claim }) =>
      accept(!label || (claim?.id === label.record.uuid && claim.data?.name === label.record.name) ? undefined : label),
    write: (tx, label) => {
      if (label) tx.reclaim(labelEntity, label);
      return !!label;
    },
  });
}

/**
 * The backfill for data written before names were kept (`npm run admin -- backfill-label-names --tenant T`):
 * every label's name claim written again carrying the name (so a command naming the label reads the claim only),
 * then every goal and check-in synced (named: a GET is then one round trip). Idempotent and safe beside the
 * stream and live traffic (each write is conditioned on the version read): a second run writes nothing.
 */
export async function backfillLabelNames(
  data: DataCtx,
  opts: { concurrency?: number } = {},
): Promise<{ labels: number; claims: number; goals: number; checkins: number; named: number }> {
  const concurrency = Math.max(1, Math.min(opts.concurrency ?? 4, 64));
  const labels = await each(partitionEntries(data, keys.entityList(data.tenantId, labelEntity.type)), concurrency, (id) =>
    claimWithName(data, id),
  );
  let goals = 0;
  let checkins = 0;
  let named = 0;
  for (const kind of GOAL_KINDS) {
    const r = await each(partitionEntries(data, keys.entityList(data.tenantId, kind)), concurrency, (id) =>
      syncLabelNames(data, goalEntity, id),
    );
    goals += r.seen;
    named += r.changed;
  }
  for (const shard of await checkinListsOf(data)) {
    const r = await each(partitionEntries(data, keys.entityList(data.tenantId, shard)), concurrency, (id) =>
      syncLabelNames(data, checkinEntity, id),
    );
    checkins += r.seen;
    named += r.changed;
  }
  return { labels: labels.seen, claims: labels.changed, goals, checkins, named };
}
