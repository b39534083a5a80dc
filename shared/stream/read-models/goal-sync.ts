import { keys, READ_MODEL_SK_PREFIX } from '#shared/db/keys.ts';
import { getEntity, getSides, nowIso, partitionEntries, querySidePage, retryOnConflict, WriteTx, type DataCtx, type SideItem, type Stored } from '#shared/db/store.ts';
import { goalEntity, GOAL_KINDS, type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { MAX_TRANSACTION_ITEMS } from '#shared/errors.ts';
import { COUNTER_SHARDS, counterDelta, desiredEntries, fingerprint, shardOf, type StoredEntry } from '#shared/stream/read-models/goal-entries.ts';

/** A goal's read-model entries as stored (consistent read of its partition's `RM#` items). */
async function storedEntries(ctx: DataCtx, goalUuid: string): Promise<Array<StoredEntry & { kind: GoalKind }>> {
  const pk = keys.readModelEntry(ctx.tenantId, goalEntity.type, goalUuid, '').PK;
  const out: Array<StoredEntry & { kind: GoalKind }> = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await querySidePage(ctx, pk, { prefix: READ_MODEL_SK_PREFIX, consistent: true, startKey });
    for (const i of page.items) out.push({ sk: i.SK.slice(READ_MODEL_SK_PREFIX.length), fp: i.fp as string, dims: (i.dims as string[]) ?? [], limited: i.lim === true, kind: i.gk as GoalKind });
    startKey = page.lastKey;
  } while (startKey);
  return out;
}

/**
 * Brings one goal's read models (entries and the counters they feed) to the goal as it is now. Idempotent and
 * version-checked: it reads the goal and its entries strongly consistent, writes only the entries that differ,
 * each conditioned on the entry as read (so two syncs of one goal never both apply a change) and with its
 * counter increments in the same transaction (a counter always equals the number of entries naming its
 * dimension), and every transaction checks the goal is still at the version read (a goal written meanwhile
 * makes it read again). A replayed or reordered change therefore converges to the same state.
 * Returns the number of entries written or deleted.
 */
export async function syncGoalReadModels(ctx: DataCtx, goalUuid: string): Promise<number> {
  return retryOnConflict(async () => {
    const [goal, stored] = await Promise.all([getEntity(ctx, goalEntity, goalUuid, true), storedEntries(ctx, goalUuid)]);
    const desired = new Map(desiredEntries(ctx.tenantId, goal?.record).map((e) => [e.sk, e]));
    const before = new Map(stored.map((e) => [e.sk, e]));
    const shard = shardOf(goalUuid, COUNTER_SHARDS);
    const groups: Array<(tx: WriteTx) => void> = [];
    for (const sk of new Set([...before.keys(), ...desired.keys()])) {
      const was = before.get(sk);
      const next = desired.get(sk);
      const fp = next && fingerprint(next);
      if (was && fp === was.fp) continue;
      const kind = (goal?.record.type ?? was?.kind)!;
      const key = keys.readModelEntry(ctx.tenantId, goalEntity.type, goalUuid, sk);
      const guard = was ? { equals: { fp: was.fp } } : { exists: false };
      const delta = counterDelta(was, next);
      groups.push((tx) => {
        if (next) {
          const item: SideItem = { GSI1PK: next.gsiPk, GSI1SK: next.gsiSk, id: goalUuid, kind: 'read_model', gk: kind, vis: next.vis, dims: next.dims, lim: next.limited, fp };
          if (next.acl) item.acl = next.acl;
          if (next.state) item.state = next.state;
          tx.putSide(key, item, { if: guard });
        } else tx.deleteSide(key, { if: guard });
        for (const [d, { n, nl }] of delta) tx.incrementSide(keys.goalCounter(ctx.tenantId, kind, d, shard), { n, nl });
      });
    }
    if (groups.length === 0) return 0;
    // Each group (an entry and its counters) is whole in one transaction; a large change spans several, each
    // valid on its own (a crash between them leaves entries and counters agreeing, and the next sync finishes).
    let tx = newTx(ctx, goal);
    for (const add of groups) {
      const probe = new WriteTx(ctx);
      add(probe);
      if (tx.size + probe.size > MAX_TRANSACTION_ITEMS) {
        await tx.commit();
        tx = newTx(ctx, goal);
      }
      add(tx);
    }
    await tx.commit();
    return groups.length;
  });
}

/** A transaction that holds only while the goal is as read (its version, or still absent). */
function newTx(ctx: DataCtx, goal: Stored<GoalRecord> | undefined): WriteTx {
  const tx = new WriteTx(ctx);
  if (goal) tx.checkVersion(goalEntity, goal);
  return tx;
}

// ---------- the tenant's readiness and the counters, as the list planner reads them ----------

/** Records that every goal of the tenant is in the read models (a new tenant has none yet; the backfill after building them). */
export async function markReadModelsReady(ctx: DataCtx): Promise<void> {
  await new WriteTx(ctx).putSide(keys.readModelState(ctx.tenantId), { kind: 'read_models', ready_at: nowIso() }).commit();
}

export interface CounterValue {
  /** Goals along the dimension (not discarded). */
  n: number;
  /** Of them, limited goals (0 means the count holds for any caller). */
  nl: number;
}

export interface GoalStats {
  /** The read models are complete for the tenant: lists may be served from them. */
  ready: boolean;
  count(dimension: string): CounterValue;
}

/** The readiness marker and the counters of `dimensions` of a kind, in one batched read (eventually consistent). */
export async function readGoalStats(ctx: DataCtx, kind: GoalKind, dimensions: string[]): Promise<GoalStats> {
  const wanted = [...new Set(dimensions)];
  const state = keys.readModelState(ctx.tenantId);
  const shards = wanted.flatMap((d) => Array.from({ length: COUNTER_SHARDS }, (_, s) => ({ d, key: keys.goalCounter(ctx.tenantId, kind, d, s) })));
  const found = await getSides(ctx, [state, ...shards.map((s) => s.key)]);
  const totals = new Map<string, CounterValue>(wanted.map((d) => [d, { n: 0, nl: 0 }]));
  for (const s of shards) {
    const item = found.get(`${s.key.PK} ${s.key.SK}`);
    if (!item) continue;
    const t = totals.get(s.d)!;
    t.n += Number(item.n ?? 0);
    t.nl += Number(item.nl ?? 0);
  }
  return { ready: found.has(`${state.PK} ${state.SK}`), count: (d) => totals.get(d) ?? { n: 0, nl: 0 } };
}

/**
 * The backfill (`npm run admin -- rebuild-read-models --tenant T`): syncs every goal of every kind (walking the
 * kind lists' keys), `concurrency` at a time, then marks the tenant ready. Idempotent: a second run finds every
 * entry as it should be and writes nothing; changes committed meanwhile are synced by the stream as well.
 */
export async function rebuildGoalReadModels(ctx: DataCtx, opts: { concurrency?: number } = {}): Promise<{ goals: number; written: number }> {
  let goals = 0;
  let written = 0;
  const concurrency = opts.concurrency ?? 16;
  for (const kind of GOAL_KINDS) {
    const ids = partitionEntries(ctx, keys.entityList(ctx.tenantId, kind));
    const next = async (): Promise<string | undefined> => {
      const r = await ids.next();
      return r.done ? undefined : r.value.id;
    };
    // the generator is shared by the workers; each pulls the next id when it is free
    let pulling: Promise<unknown> = Promise.resolve();
    const take = () => {
      const p = pulling.then(next);
      pulling = p;
      return p;
    };
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let id = await take(); id; id = await take()) {
          goals++;
          written += await syncGoalReadModels(ctx, id);
        }
      }),
    );
  }
  await markReadModelsReady(ctx);
  return { goals, written };
}
