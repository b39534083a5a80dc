import { nowIso } from '#shared/clock.ts';
import { runCommand } from '#shared/command/run.ts';
import { keys } from '#shared/db/keys.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { layoutMove } from '#shared/db/tenant-layouts.ts';
import { accept } from '#shared/decision.ts';
import { CHECKIN_LIST_SHARDS, CHECKIN_LISTS, checkinEntity, LEGACY_CHECKIN_LISTS } from '#shared/domain/checkins/entity.ts';

/**
 * The check-in list went from 16 shards to CHECKIN_LIST_SHARDS (entity.ts). Every write names the current ones
 * (checkin#0, #1, themselves among the old names), so a tenant's check-ins written before stay in the old 16
 * until written again: until the tenant's marker says every check-in moved (written with a new tenant, or by the
 * reshard below), its readers (the list, the label-names fan-out) read all 16 old names, which hold every
 * check-in, old or new. A marker read stale only makes a reader read the 16.
 */

/** The tenant's check-ins all in the current list shards (a new tenant's, or after the reshard below). */
const resharded = layoutMove({
  key: keys.checkinListsState,
  item: (at) => ({ kind: 'checkin_layout', list_shards: CHECKIN_LIST_SHARDS, resharded_at: at }),
  holds: (marker) => marker.list_shards === CHECKIN_LIST_SHARDS,
});

/** Marks the tenant's check-ins all in the current list shards, as part of `tx` (a new tenant's create: it has none yet). */
export const putCheckinListsResharded = resharded.mark;

/** Whether the tenant is marked resharded: read once (eventually consistent), then known to this container. */
export const checkinListsResharded = (ctx: DataCtx): Promise<boolean> => resharded.marked(ctx);

/** The list names holding every check-in of the tenant: the current shards once marked, else all 16 old names. */
export const checkinListsOf = async (ctx: DataCtx): Promise<string[]> =>
  (await checkinListsResharded(ctx)) ? CHECKIN_LISTS : LEGACY_CHECKIN_LISTS;

/** Writes one check-in again as it is (its list and label entries move, WriteTx.replace); true when it wrote. */
const moveCheckin = (ctx: DataCtx, uuid: string): Promise<boolean> =>
  runCommand(ctx, {
    read: () => getEntity(ctx, checkinEntity, uuid, true),
    // deleted since the walk found it, or already in the current shards: nothing to write
    decide: (stored) => accept(stored?.record.list_shards === CHECKIN_LIST_SHARDS ? undefined : stored),
    write: (tx, stored) => {
      if (stored) tx.replace(checkinEntity, stored, stored.record);
      return !!stored;
    },
  });

/**
 * The reshard for check-ins written under 16 list shards (`npm run admin -- reshard-checkin-lists --tenant T`, once
 * the code writing 2 is deployed everywhere: an old writer could still put a check-in in an old shard): every
 * check-in in the old 16 list partitions written again as it is (its list and label entries move to the current
 * shard; each write conditioned on the version read, so it is safe beside live writes), then the tenant marked,
 * so its readers stop reading the old shards. Idempotent: a second run writes nothing. A check-in moved a moment
 * before the mark may show in neither shard for as long as the index lags (lists may lag 2 s: contract 14).
 */
export async function reshardCheckinLists(ctx: DataCtx, opts: { concurrency?: number } = {}): Promise<{ checkins: number; moved: number }> {
  const partitions = LEGACY_CHECKIN_LISTS.map((list) => keys.entityList(ctx.tenantId, list));
  const { seen, moved } = await resharded.moveAll(ctx, partitions, (id) => moveCheckin(ctx, id), { ...opts, at: nowIso() });
  return { checkins: seen, moved };
}
