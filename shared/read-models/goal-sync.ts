import { keys, READ_MODEL_SK_PREFIX } from '#shared/db/keys.ts';
import { nowIso } from '#shared/clock.ts';
import { retryOnConflict } from '#shared/db/conflict-retries.ts';
import { queryList } from '#shared/db/index-queries.ts';
import type { Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities } from '#shared/db/reads.ts';
import { getSides, querySidePage, type SideItem } from '#shared/db/side-items.ts';
import { checkVersionOp, commitPlanned, deleteSideOp, incrementSideOp, putSideOp, type TxOp } from '#shared/db/tx-ops.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { goalEntity, GOAL_KINDS, type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { MAX_TRANSACTION_ITEMS } from '#shared/errors.ts';
import {
  COUNTER_SHARDS,
  READ_MODELS_VERSION,
  STREAM_COUNTER_SHARDS,
  counterDelta,
  counterKey,
  desiredEntries,
  entriesWrittenAtCreate,
  fingerprint,
  shardOf,
  type ReadModelEntry,
  type StoredEntry,
} from '#shared/read-models/goal-entries.ts';

/** A goal's read-model entries as stored (consistent read of its partition's `RM#` items). */
async function storedEntries(ctx: DataCtx, goalUuid: string): Promise<Array<StoredEntry & { kind: GoalKind }>> {
  const pk = keys.readModelEntry(ctx.tenantId, goalEntity.type, goalUuid, '').PK;
  const out: Array<StoredEntry & { kind: GoalKind }> = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await querySidePage(ctx, pk, { prefix: READ_MODEL_SK_PREFIX, consistent: true, startKey });
    for (const i of page.items)
      out.push({
        sk: i.SK.slice(READ_MODEL_SK_PREFIX.length),
        fp: i.fp as string,
        dims: (i.dims as string[]) ?? [],
        limited: i.lim === true,
        kind: i.gk as GoalKind,
      });
    startKey = page.lastKey;
  } while (startKey);
  return out;
}

/** A read-model entry as stored: its list keys, envelope, what it counts and its fingerprint (the next write's condition). */
function readModelItem(goalUuid: string, kind: GoalKind, entry: ReadModelEntry): SideItem {
  const item: SideItem = {
    GSI1PK: entry.gsiPk,
    GSI1SK: entry.gsiSk,
    id: goalUuid,
    kind: 'read_model',
    gk: kind,
    vis: entry.vis,
    dims: entry.dims,
    lim: entry.limited,
    fp: fingerprint(entry),
  };
  if (entry.acl) item.acl = entry.acl;
  if (entry.state) item.state = entry.state;
  return item;
}

/**
 * Adds to a goal's create the read-model entries it writes itself (entriesWrittenAtCreate: the last-check-in
 * order's), as the stream's sync would write them: the sync then finds them as they should be.
 */
export function addEntriesWrittenAtCreate(tx: WriteTx, tenantId: string, goal: GoalRecord): void {
  for (const e of entriesWrittenAtCreate(tenantId, goal))
    tx.putSide(keys.readModelEntry(tenantId, goalEntity.type, goal.uuid, e.sk), readModelItem(goal.uuid, goal.type, e));
}

/** One goal's pending change: its entry writes and what they add to each counter dimension. */
export interface GoalChange {
  goal: Stored<GoalRecord> | undefined;
  uuid: string;
  kind: GoalKind;
  /** Each entry write (conditioned on the entry as read) with the counter increments it makes. */
  entries: Array<{ op: TxOp; counters: Map<string, { n: number; nl: number }> }>;
  /** Their sum. */
  counters: Map<string, { n: number; nl: number }>;
}

/** What syncing `goalUuid` would write, read strongly consistent (undefined: nothing to do). */
async function pendingChange(ctx: DataCtx, goalUuid: string, goal: Stored<GoalRecord> | undefined): Promise<GoalChange | undefined> {
  const stored = await storedEntries(ctx, goalUuid);
  const desired = new Map(desiredEntries(ctx.tenantId, goal?.record).map((e) => [e.sk, e]));
  const before = new Map(stored.map((e) => [e.sk, e]));
  const kind = (goal?.record.type ?? stored[0]?.kind)!;
  const change: GoalChange = { goal, uuid: goalUuid, kind, entries: [], counters: new Map() };
  for (const sk of new Set([...before.keys(), ...desired.keys()])) {
    const was = before.get(sk);
    const next = desired.get(sk);
    const fp = next && fingerprint(next);
    if (was && fp === was.fp) continue;
    const key = keys.readModelEntry(ctx.tenantId, goalEntity.type, goalUuid, sk);
    const guard = was ? { equals: { fp: was.fp } } : { exists: false };
    const counters = counterDelta(was, next);
    const op = next ? putSideOp(key, readModelItem(goalUuid, kind, next), guard) : deleteSideOp(key, guard);
    change.entries.push({ op, counters });
    for (const [d, v] of counters) addTo(change.counters, d, v);
  }
  return change.entries.length ? change : undefined;
}

function addTo(into: Map<string, { n: number; nl: number }>, d: string, v: { n: number; nl: number }) {
  const cur = into.get(d) ?? { n: 0, nl: 0 };
  into.set(d, { n: cur.n + v.n, nl: cur.nl + v.nl });
}

/** What syncing the goals would write, read strongly consistent: each goal and its entries as stored (goals with nothing to do left out). */
export async function readGoalSync(ctx: DataCtx, goalUuids: string[]): Promise<GoalChange[]> {
  const goals = await getEntities(ctx, goalEntity, goalUuids, true);
  return (await Promise.all(goalUuids.map((id) => pendingChange(ctx, id, goals.get(id))))).filter((c): c is GoalChange => !!c);
}

/**
 * Pure: the transactions that bring the read models to `changes`, in order. Several goals share a transaction,
 * their counter increments summed per counter item; one goal's whole change is in one transaction when it fits
 * (a goal with every association changing may not: then its entries are split, each part with its own counters,
 * still exact at every commit); every transaction checks each goal it writes for is still at the version read.
 */
export function planGoalSync(tenantId: string, changes: readonly GoalChange[], opts: { shard?: number } = {}): TxOp[][] {
  const out: TxOp[][] = [];
  let tx: TxOp[] | undefined;
  let counters = new Map<string, { kind: GoalKind; d: string; shard: number; n: number; nl: number }>();
  const commit = () => {
    if (!tx) return;
    for (const c of counters.values())
      if (c.n || c.nl) tx.push(incrementSideOp(counterKey(tenantId, c.kind, c.d, c.shard), { n: c.n, nl: c.nl }));
    out.push(tx);
    tx = undefined;
    counters = new Map();
  };
  for (const change of changes) {
    const shard = opts.shard ?? shardOf(change.uuid, STREAM_COUNTER_SHARDS);
    const newCounters = [...change.counters.keys()].filter((d) => !counters.has(`${change.kind} ${d} ${shard}`)).length;
    if (tx && tx.length + 1 + change.entries.length + counters.size + newCounters > MAX_TRANSACTION_ITEMS) commit();
    tx ??= [];
    if (change.goal) tx.push(checkVersionOp(goalEntity, change.goal));
    if (tx.length + change.entries.length + counters.size + newCounters <= MAX_TRANSACTION_ITEMS) {
      for (const e of change.entries) tx.push(e.op);
      for (const [d, v] of change.counters) addCounter(counters, change.kind, d, shard, v);
      continue;
    }
    // too large for one transaction: entry by entry, each with the counters it moves
    for (const part of change.entries) {
      if (tx!.length + 1 + counters.size + part.counters.size > MAX_TRANSACTION_ITEMS) {
        commit();
        tx = change.goal ? [checkVersionOp(goalEntity, change.goal)] : [];
      }
      tx!.push(part.op);
      for (const [d, v] of part.counters) addCounter(counters, change.kind, d, shard, v);
    }
  }
  commit();
  return out;
}

/**
 * Brings goals' read models (entries and the counters they feed) to the goals as they are now. Idempotent and
 * version-checked: it reads each goal and its entries strongly consistent (readGoalSync), writes only the entries
 * that differ, each conditioned on the entry as read (two syncs of one goal never both apply a change), with the
 * counter increments of those entries in the same transaction (a counter always equals the number of entries
 * naming its dimension), and every transaction checks each goal it writes for is still at the version read (a
 * goal written meanwhile makes it read again). A replayed or reordered change therefore converges to the same state.
 *
 * Several goals share a transaction (planGoalSync): the backfill writes ten or more goals per transaction and its
 * workers each add to their own counter shard (`shard`), so they never contend for one item. Without `shard` a
 * goal adds to the shard of its uuid. Returns the number of entries written or deleted.
 */
export async function syncGoals(ctx: DataCtx, goalUuids: string[], opts: { shard?: number } = {}): Promise<number> {
  if (goalUuids.length === 0) return 0;
  // Not runCommand: one attempt packs many goals into several transactions, committed in order (the runner commits one).
  return retryOnConflict(async () => {
    const changes = await readGoalSync(ctx, goalUuids);
    await commitPlanned(ctx, planGoalSync(ctx.tenantId, changes, opts));
    return changes.reduce((n, c) => n + c.entries.length, 0);
  });
}

function addCounter(
  into: Map<string, { kind: GoalKind; d: string; shard: number; n: number; nl: number }>,
  kind: GoalKind,
  d: string,
  shard: number,
  v: { n: number; nl: number },
) {
  const k = `${kind} ${d} ${shard}`;
  const cur = into.get(k) ?? { kind, d, shard, n: 0, nl: 0 };
  into.set(k, { ...cur, n: cur.n + v.n, nl: cur.nl + v.nl });
}

// ---------- the tenant's readiness and the counters, as the list planner reads them ----------

/** Marks the tenant's read models complete at this layout version, as part of `tx` (a new tenant's own create writes it: it has no goals yet). */
export const putReadModelsReady = (tx: WriteTx, tenantId: string, at = nowIso()): WriteTx =>
  tx.putSide(keys.readModelState(tenantId), { kind: 'read_models', ready_at: at, version: READ_MODELS_VERSION });

/** Records that every goal of the tenant is in the read models at this layout version (the backfill after building them). */
export async function markReadModelsReady(ctx: DataCtx): Promise<void> {
  await putReadModelsReady(new WriteTx(ctx), ctx.tenantId).commit();
}

/**
 * The stream's mark of a new tenant, written only when its create did not write one (a tenant created by code from
 * before the create wrote it), so the create's own marker is never replaced: conditioned on its absence.
 */
export const newTenantReadyOp = (tenantId: string, at: string): TxOp =>
  putSideOp(keys.readModelState(tenantId), { kind: 'read_models', ready_at: at, version: READ_MODELS_VERSION }, { exists: false });

export interface CounterValue {
  /** Goals along the dimension (not discarded). */
  n: number;
  /** Of them, limited goals (0 means the count holds for any caller). */
  nl: number;
}

export interface GoalStats {
  /** The read models are complete for the tenant: lists may be served from them. */
  ready: boolean;
  /** The layout version they were completed at (READ_MODELS_VERSION; 1 for a marker without one); 0 when not ready. */
  version: number;
  count(dimension: string): CounterValue;
}

/**
 * Tenants whose readiness marker this container has seen, with its version. A marker is written once the read
 * models are complete and they stay complete (the stream keeps them), so what was seen holds for this code's
 * layout: a plan that needs only the readiness reads nothing more (readiness below).
 */
const seenReady = new Map<string, number>();
const MAX_SEEN_READY = 10_000;

/** The read models' version this container already knows the tenant to be ready at (0: not known, read it). */
export const knownReadiness = (tenantId: string): number => seenReady.get(tenantId) ?? 0;

/** The readiness marker and the counters of `dimensions` of a kind, in one batched read (eventually consistent). */
export async function readGoalStats(ctx: DataCtx, kind: GoalKind, dimensions: string[]): Promise<GoalStats> {
  const wanted = [...new Set(dimensions)];
  const state = keys.readModelState(ctx.tenantId);
  const shards = wanted.flatMap((d) =>
    Array.from({ length: COUNTER_SHARDS }, (_, s) => ({ d, key: keys.goalCounter(ctx.tenantId, kind, d, s) })),
  );
  const found = await getSides(ctx, [state, ...shards.map((s) => s.key)]);
  const totals = new Map<string, CounterValue>(wanted.map((d) => [d, { n: 0, nl: 0 }]));
  for (const s of shards) {
    const item = found.get(`${s.key.PK} ${s.key.SK}`);
    if (!item) continue;
    const t = totals.get(s.d)!;
    t.n += Number(item.n ?? 0);
    t.nl += Number(item.nl ?? 0);
  }
  const marker = found.get(`${state.PK} ${state.SK}`);
  const version = marker ? Number(marker.version ?? 1) : 0;
  if (version && seenReady.get(ctx.tenantId) !== version) {
    if (seenReady.size >= MAX_SEEN_READY) seenReady.clear();
    seenReady.set(ctx.tenantId, version);
  }
  return { ready: !!marker, version, count: (d) => totals.get(d) ?? { n: 0, nl: 0 } };
}

/**
 * The backfill (`npm run admin -- rebuild-read-models --tenant T`): syncs every goal of every kind (walking the
 * kind lists' keys, newest first), 25 goals a transaction step on each of `concurrency` workers (default 2), then
 * marks the tenant ready. Idempotent: a second run finds every
 * entry as it should be and writes nothing; changes committed meanwhile are synced by the stream as well.
 */
export async function rebuildGoalReadModels(
  ctx: DataCtx,
  opts: { concurrency?: number } = {},
): Promise<{ goals: number; written: number }> {
  let goals = 0;
  let written = 0;
  const workers = Math.max(1, Math.min(opts.concurrency ?? COUNTER_SHARDS - STREAM_COUNTER_SHARDS, 64));
  for (const kind of GOAL_KINDS) {
    // newest first: the stream works through fresh changes oldest first, so the two meet once instead of racing
    const ids = newestFirst(ctx, keys.entityList(ctx.tenantId, kind));
    // the key walk is shared by the workers; each takes the next 25 ids when it is free
    let pulling: Promise<unknown> = Promise.resolve();
    const take = (): Promise<string[]> => {
      const p = pulling.then(async () => {
        const out: string[] = [];
        for (let r = await ids.next(); !r.done; r = await ids.next()) {
          out.push(r.value);
          if (out.length === 25) break;
        }
        return out;
      });
      pulling = p;
      return p;
    };
    await Promise.all(
      Array.from({ length: workers }, async (_, worker) => {
        // its own counter shard, never one the stream adds to
        const shard = STREAM_COUNTER_SHARDS + (worker % (COUNTER_SHARDS - STREAM_COUNTER_SHARDS));
        for (let batch = await take(); batch.length; batch = await take()) {
          goals += batch.length;
          written += await syncGoals(ctx, batch, { shard });
        }
      }),
    );
  }
  await markReadModelsReady(ctx);
  return { goals, written };
}

async function* newestFirst(ctx: DataCtx, partition: string): AsyncGenerator<string> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await queryList(ctx, partition, { forward: false, startKey });
    for (const e of page.entries) yield e.id;
    startKey = page.lastKey;
  } while (startKey);
}
