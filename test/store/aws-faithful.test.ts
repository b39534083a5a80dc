import { randomUUID } from 'node:crypto';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  awsFaithfulLayer,
  describeFaithfulCounts,
  FAULT_KINDS,
  type FaithfulCounts,
  faithfulExpectation,
  faithfulProblems,
  type FaithfulLayer,
} from '../../scripts/lib/aws-faithful.ts';
import { config } from '#shared/config.ts';
import { createDynamoClient, instrument } from '#shared/db/client.ts';
import { retryOnConflict, retryTransactionConflicts } from '#shared/db/conflict-retries.ts';
import { entryList, entryListPartition } from '#shared/db/entry-lists.ts';
import { entriesOf, queryList } from '#shared/db/index-queries.ts';
import { keys } from '#shared/db/keys.ts';
import { entry, type BaseRecord, type EntityDef } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { conditionFailed, ConcurrentUpdateError, TransactionConflictError } from '#shared/errors.ts';

/** The AWS-faithful layer (scripts/lib/aws-faithful.ts) on its own, against DynamoDB Local, under the store. */
interface Thing extends BaseRecord {
  owner: string;
  n: number;
}
const thingsByOwner = entryList('faithful_thing', 'owner');
const thing: EntityDef<Thing> = { type: 'faithful_thing', entries: (t) => [entry(thingsByOwner, t.owner)] };

const STALE_MS = 600;
type Layered = DataCtx['db'] & { layer: FaithfulLayer; client: DynamoDBClient };
/**
 * A client as the service builds one (createDynamoClient: the SDK's standard retries, 5 attempts, and what the
 * store adds to them) with the layer on it; `plain`: a bare SDK client instead, to show what the store adds.
 */
const layered = (opts: {
  staleMs?: number;
  faultRate?: number;
  random?: () => number;
  now?: () => number;
  plain?: boolean;
  layer?: FaithfulLayer;
}): Layered => {
  const client = opts.plain
    ? new DynamoDBClient({
        endpoint: config.dynamoEndpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        maxAttempts: 5,
      })
    : createDynamoClient();
  const layer =
    opts.layer ??
    awsFaithfulLayer({
      staleMs: opts.staleMs ?? 0,
      faultRate: opts.faultRate ?? 0,
      endpoint: config.dynamoEndpoint!,
      random: opts.random,
      now: opts.now,
    });
  layer(client);
  return Object.assign(instrument(client), { layer, client });
};
/** A random source that answers `draws` in turn, then `rest`. */
const scripted = (draws: number[], rest = 0.9) => {
  const left = [...draws];
  return Object.assign(() => left.shift() ?? rest, { left });
};
const faults = (db: Layered, kind: string, call: string) => db.layer.counts.faults[kind]?.[call] ?? 0;
const now = () => new Date().toISOString();
const newThing = (owner: string, n = 1): Thing => ({ uuid: randomUUID(), owner, n, created_at: now(), updated_at: now() });
const collect = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};
/** An eventually consistent GetItem of a thing, checked to agree with an eventually consistent BatchGetItem of it. */
const eventual = async (c: DataCtx, id: string) => {
  const out = await c.db.send(
    new GetCommand({ TableName: config.tableName, Key: keys.entity(c.tenantId, thing.type, id), ConsistentRead: false }),
  );
  expect((await getEntities(c, thing, [id], false)).get(id)?.record).toEqual(out.Item?.rec);
  return out.Item ? { record: out.Item.rec as Thing } : undefined;
};
/** The layer's clock, moved by the test: a window passes when the test says so, however slow the machine. */
const testClock = () => {
  const clock = { t: Date.now(), now: () => clock.t, pastWindow: () => (clock.t += STALE_MS + 1) };
  return clock;
};

describe('AWS-faithful layer', () => {
  it('answers eventually consistent reads and index queries with the state of STALE_MS ago, strongly consistent reads with the current one', async () => {
    const clock = testClock();
    const db = layered({ staleMs: STALE_MS, now: clock.now });
    const c: DataCtx = { tenantId: randomUUID(), db };
    const owner = randomUUID();
    const a = newThing(owner);
    await new WriteTx(c).create(thing, a).commit();
    // a new item: not there yet, except to a strongly consistent read; each read counted as stale
    expect(await eventual(c, a.uuid)).toBeUndefined();
    expect(await collect(entriesOf(c, thingsByOwner, owner))).toEqual([]);
    expect((await getEntity(c, thing, a.uuid, true))?.record.n).toBe(1);
    const served = { GetItem: 1, BatchGetItem: 1, 'Query (index)': 1 };
    expect(db.layer.counts).toEqual({ faults: {}, reads: served, stale: served });
    clock.pastWindow();
    expect((await eventual(c, a.uuid))?.record.n).toBe(1);
    expect((await collect(entriesOf(c, thingsByOwner, owner))).map((e) => e.id)).toEqual([a.uuid]);
    // past the window: answered as they are, not counted as stale
    expect(db.layer.counts).toEqual({ faults: {}, reads: { GetItem: 2, BatchGetItem: 2, 'Query (index)': 2 }, stale: served });

    // a change: the old version within the window; a move to another list: still in the old one, not yet in the new
    const stored = (await getEntity(c, thing, a.uuid, true))!;
    const other = randomUUID();
    await new WriteTx(c).replace(thing, stored, { ...a, n: 2, owner: other }).commit();
    expect((await eventual(c, a.uuid))?.record.n).toBe(1);
    expect((await collect(entriesOf(c, thingsByOwner, owner))).map((e) => e.id)).toEqual([a.uuid]);
    expect(await collect(entriesOf(c, thingsByOwner, other))).toEqual([]);
    expect((await getEntity(c, thing, a.uuid, true))?.record.n).toBe(2);
    clock.pastWindow();
    expect((await eventual(c, a.uuid))?.record.n).toBe(2);
    expect(await collect(entriesOf(c, thingsByOwner, owner))).toEqual([]);
    expect((await collect(entriesOf(c, thingsByOwner, other))).map((e) => e.id)).toEqual([a.uuid]);

    // a delete: still there within the window
    await new WriteTx(c).remove(thing, (await getEntity(c, thing, a.uuid, true))!).commit();
    expect((await eventual(c, a.uuid))?.record.n).toBe(2);
    expect((await collect(entriesOf(c, thingsByOwner, other))).map((e) => e.id)).toEqual([a.uuid]);
    expect(await getEntity(c, thing, a.uuid, true)).toBeUndefined();
    clock.pastWindow();
    expect(await eventual(c, a.uuid)).toBeUndefined();
    expect(await collect(entriesOf(c, thingsByOwner, other))).toEqual([]);
  });

  it('keeps an index page within its limit and its order while it answers removed and not-yet-written entries', async () => {
    const c: DataCtx = { tenantId: randomUUID(), db: layered({ staleMs: 60_000 }) };
    const owner = randomUUID();
    const things = Array.from({ length: 5 }, (_, i) => ({ ...newThing(owner, i), created_at: `2026-01-0${i + 1}T00:00:00.000Z` }));
    const plain: DataCtx = { tenantId: c.tenantId, db: layered({}) };
    for (const t of things.slice(0, 3)) await new WriteTx(plain).create(thing, t).commit(); // before the window: not recorded
    for (const t of things.slice(3)) await new WriteTx(c).create(thing, t).commit(); // not there yet
    await new WriteTx(c).remove(thing, (await getEntity(c, thing, things[1]!.uuid, true))!).commit(); // still there
    const pages: string[][] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await queryList(c, entryListPartition(c.tenantId, thingsByOwner, owner), { startKey, limit: 2 });
      expect(page.entries.length).toBeLessThanOrEqual(2);
      pages.push(page.entries.map((e) => e.id));
      startKey = page.lastKey;
    } while (startKey);
    expect(pages.flat()).toEqual(things.slice(0, 3).map((t) => t.uuid));
  });

  it('fails attempts with the errors DynamoDB sends, which the SDK retries as deployed (throttling, internal errors)', async () => {
    const c: DataCtx = { tenantId: randomUUID(), db: layered({}) };
    const a = newThing(randomUUID());
    await new WriteTx(c).create(thing, a).commit();
    const key = keys.entity(c.tenantId, thing.type, a.uuid);
    const read = (db: DataCtx['db']) =>
      db
        .send(new GetCommand({ TableName: config.tableName, Key: key, ConsistentRead: true }))
        .catch((e: { name: string; $metadata: { httpStatusCode: number; attempts: number } }) => e);
    // every attempt fails: the retries end after the client's 5 attempts, with the error AWS sends
    const failing = layered({ faultRate: 1, random: () => 0.9 });
    expect(await read(failing)).toMatchObject({ name: 'InternalServerError', $metadata: { httpStatusCode: 500, attempts: 5 } });
    // one attempt throttled, the next passes: the caller sees the item
    for (const [pick, name] of [
      [0, 'ProvisionedThroughputExceededException'],
      [0.4, 'ThrottlingException'],
    ] as const) {
      const db = layered({ faultRate: 0.5, random: scripted([0, pick]) });
      const out = await read(db);
      expect(out).toMatchObject({ Item: { id: a.uuid }, $metadata: { attempts: 2 } });
      expect(db.layer.counts.faults).toEqual({ [name]: { GetItem: 1 } });
    }
  });

  it('cancels a transaction as a TransactionConflict, which the store answers as a lost race and the runner retries', async () => {
    let conflicts = 0;
    // the first transaction attempt conflicts (its second draw picks the conflict, the last of a transaction's five faults)
    const db = layered({ faultRate: 0.5, random: scripted([0, 0.99]) });
    const c: DataCtx = { tenantId: randomUUID(), db };
    const a = newThing(randomUUID());
    const created = await retryOnConflict(async (n) => {
      try {
        await new WriteTx(c).create(thing, a).commit();
      } catch (err) {
        if (err instanceof ConcurrentUpdateError) conflicts++;
        throw err;
      }
      return n;
    });
    expect(conflicts).toBe(1);
    expect(created).toBe(1);
    expect((await getEntity(c, thing, a.uuid, true))?.record.uuid).toBe(a.uuid);
    expect(db.layer.counts.faults).toEqual({ [FAULT_KINDS.transactionConflict]: { TransactWriteItems: 1 } });
  });

  it('tells a transaction conflict (nothing written: the same write made again) from a failed condition (an answer)', async () => {
    // A write that reads "already there" as done (a notice, a delivery's claim) must not read a conflict so: the
    // chaos run in this mode lost webhook deliveries that way.
    const random = scripted([0, 0.99]); // the next attempt conflicts (its second draw picks the conflict)
    const db = layered({ faultRate: 0.5, random });
    const c: DataCtx = { tenantId: randomUUID(), db };
    const a = newThing(randomUUID());
    const conflict = await new WriteTx(c)
      .create(thing, a)
      .commit()
      .catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(TransactionConflictError);
    expect(conditionFailed(conflict)).toBe(false);
    expect(await getEntity(c, thing, a.uuid, true)).toBeUndefined();
    // made again while it conflicts: the first attempt conflicts, the second passes
    random.left.push(0, 0.99);
    let attempts = 0;
    await retryTransactionConflicts(() => (attempts++, new WriteTx(c).create(thing, a).commit()));
    expect(attempts).toBe(2);
    expect(faults(db, FAULT_KINDS.transactionConflict, 'TransactWriteItems')).toBe(2);
    expect((await getEntity(c, thing, a.uuid, true))?.record.uuid).toBe(a.uuid);
    // a failed condition is the answer: thrown at once, not made again
    attempts = 0;
    const taken = await retryTransactionConflicts(() => (attempts++, new WriteTx(c).create(thing, a).commit())).catch((e: unknown) => e);
    expect(conditionFailed(taken)).toBe(true);
    expect(attempts).toBe(1);
  });

  it('answers part of a BatchGetItem, the rest as UnprocessedKeys, which the store reads again', async () => {
    const db = layered({ faultRate: 0.5, random: scripted([0, 0]) }); // partial, one key processed; every attempt passes
    const c: DataCtx = { tenantId: randomUUID(), db };
    const owner = randomUUID();
    const things = [newThing(owner), newThing(owner), newThing(owner)];
    for (const t of things) await new WriteTx({ ...c, db: layered({}) }).create(thing, t).commit();
    const found = await getEntities(
      c,
      thing,
      things.map((t) => t.uuid),
    );
    expect([...found.keys()].sort()).toEqual(things.map((t) => t.uuid).sort());
    expect(db.layer.counts.faults).toEqual({ [FAULT_KINDS.unprocessedKeys]: { BatchGetItem: 1 } });
    // as AWS answers it: the keys not read, with the request's own settings
    const raw = layered({ faultRate: 0.5, random: scripted([0, 0.5]) }); // 1 + floor(0.5 × 2) = 2 keys processed
    const keyList = things.map((t) => keys.entity(c.tenantId, thing.type, t.uuid));
    const out = await raw.send(new BatchGetCommand({ RequestItems: { [config.tableName]: { Keys: keyList, ConsistentRead: true } } }));
    expect(out.Responses?.[config.tableName]?.map((i) => i.id).sort()).toEqual(
      things
        .slice(0, 2)
        .map((t) => t.uuid)
        .sort(),
    );
    expect(out.UnprocessedKeys).toEqual({ [config.tableName]: { Keys: [keyList[2]], ConsistentRead: true } });
  });

  it('answers 500 to a transaction that applied: the SDK retries it with its ClientRequestToken, which succeeds without writing again', async () => {
    const db = layered({ faultRate: 0.5, random: scripted([0, 0.7]) }); // floor(0.7 × 5) = 3: the applied 500
    const c: DataCtx = { tenantId: randomUUID(), db };
    const a = newThing(randomUUID());
    await new WriteTx(c).create(thing, a).commit();
    expect(db.layer.counts.faults).toEqual({ [FAULT_KINDS.appliedInternal]: { TransactWriteItems: 1 } });
    expect(await getEntity(c, thing, a.uuid, true)).toEqual({ record: a, version: 1 });
    // its replay is answered from the write that applied: failed perhaps, never cancelled for a conflict (a conflict
    // would make the store write again and meet its own write: a delivery's claim read as another's)
    const replayed = layered({ faultRate: 0.5, random: scripted([0, 0.7, 0, 0.99]) }); // the replay's 0.99 would pick a conflict
    const b = newThing(randomUUID());
    await new WriteTx({ ...c, db: replayed }).create(thing, b).commit();
    expect(replayed.layer.counts.faults).toEqual({
      [FAULT_KINDS.appliedInternal]: { TransactWriteItems: 1 },
      [FAULT_KINDS.internal]: { TransactWriteItems: 1 },
    });
    expect(await getEntity(c, thing, b.uuid, true)).toEqual({ record: b, version: 1 });
  });

  it('answers 500 to a conditional put that applied: the retry meets its own write, which the store answers as done', async () => {
    // Powertools' idempotency record is such a put: without this, the request found "its" record in progress (409).
    const item = (n: number) => marshall({ PK: `T#${randomUUID()}#faithful`, SK: '#', n });
    const put = (db: Layered, i: ReturnType<typeof item>) =>
      db.client
        .send(
          new PutItemCommand({
            TableName: config.tableName,
            Item: i,
            ConditionExpression: 'attribute_not_exists(PK)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        )
        .catch((e: Error) => e);
    // floor(0.8 × 4) = 3: the applied 500 of a single-item write
    const bare = layered({ plain: true, faultRate: 0.5, random: scripted([0, 0.8]) });
    expect(await put(bare, item(1))).toMatchObject({ name: 'ConditionalCheckFailedException' }); // the SDK alone
    const db = layered({ faultRate: 0.5, random: scripted([0, 0.8]) });
    const mine = item(1);
    expect(await put(db, mine)).toMatchObject({ $metadata: { httpStatusCode: 200, attempts: 2 } });
    expect(db.layer.counts.faults).toEqual({ [FAULT_KINDS.appliedInternal]: { PutItem: 1 } });
    // a 500 that did not apply, and the item is another's: its failed condition is the answer
    const other = layered({ faultRate: 0.5, random: scripted([0, 0.6]) }); // floor(0.6 × 4) = 2: a 500, not applied
    expect(await put(other, { ...mine, n: { N: '2' } })).toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect(other.layer.counts.faults).toEqual({ [FAULT_KINDS.internal]: { PutItem: 1 } });
  });

  it('rejects a single-item write of an item a transaction is writing (TransactionConflictException), which the client retries', async () => {
    const layer = awsFaithfulLayer({ staleMs: 0, faultRate: 0.5, endpoint: config.dynamoEndpoint!, random: () => 0.9 });
    const tenantId = randomUUID();
    /** A client whose transaction attempts wait, once they count as under way, until `release`; `reached` once one waits. */
    const holding = () => {
      let reached!: () => void;
      let release!: () => void;
      const at = new Promise<void>((r) => (reached = r));
      const held = new Promise<void>((r) => (release = r));
      const db = layered({ layer });
      db.client.middlewareStack.add((next) => async (args) => (reached(), await held, next(args)), {
        step: 'deserialize',
        priority: 'low',
        name: 'holdTransaction',
      });
      return { db, at, release };
    };
    const putOf = (id: string) => ({ TableName: config.tableName, Item: { ...keys.entity(tenantId, thing.type, id), id, v: 7 } });

    const a = newThing(randomUUID());
    const first = holding();
    const tx = new WriteTx({ tenantId, db: first.db }).create(thing, a).commit();
    await first.at;
    // the put's rejected attempt lets the transaction go on, and is retried once the transaction answered
    const putDb = layered({ layer });
    putDb.client.middlewareStack.add(
      (next) => async (args) => {
        try {
          return await next(args);
        } catch (err) {
          first.release();
          await tx;
          throw err;
        }
      },
      { step: 'finalizeRequest', priority: 'low', name: 'releaseTransaction' },
    );
    const put = await putDb.send(new PutCommand(putOf(a.uuid)));
    expect(put.$metadata.attempts).toBe(2);
    expect(layer.counts.faults).toEqual({ [FAULT_KINDS.singleItemConflict]: { PutItem: 1 } });
    expect((await getEntity({ tenantId, db: putDb }, thing, a.uuid, true))?.version).toBe(7); // applied after the transaction

    // the SDK alone does not retry it: the caller would see the conflict
    const b = newThing(randomUUID());
    const second = holding();
    const tx2 = new WriteTx({ tenantId, db: second.db }).create(thing, b).commit();
    await second.at;
    const refused = await layered({ plain: true, layer })
      .send(new PutCommand(putOf(b.uuid)))
      .catch((e: Error) => e);
    second.release();
    await tx2;
    expect(refused).toMatchObject({ name: 'TransactionConflictException', $metadata: { attempts: 1 } });
    expect(layer.counts.faults).toEqual({ [FAULT_KINDS.singleItemConflict]: { PutItem: 2 } });
  });

  it('tells what it counted, and a run whose counts do not show the mode at work fails', () => {
    const none: FaithfulCounts = { faults: {}, reads: { 'Query (index)': 40 }, stale: {} };
    const some: FaithfulCounts = {
      faults: { [FAULT_KINDS.throttling]: { GetItem: 2, Query: 1 }, [FAULT_KINDS.unprocessedKeys]: { BatchGetItem: 1 } },
      reads: { 'Query (index)': 40, GetItem: 3 },
      stale: { 'Query (index)': 5 },
    };
    expect(describeFaithfulCounts(some)).toBe(
      [
        'AWS-faithful: 4 faults injected: ThrottlingException 3 (GetItem 2, Query 1); UnprocessedKeys 1 (BatchGetItem 1)',
        'AWS-faithful: 5 stale reads served of 43 eventually consistent: Query (index) 5 of 40, GetItem 0 of 3',
      ].join('\n'),
    );
    const both = faithfulExpectation({});
    expect(both).toEqual({ faults: true, stale: true });
    expect(faithfulProblems(some, both)).toEqual([]);
    expect(faithfulProblems(none, both)).toEqual([
      'no fault was injected, though faults are on',
      'no stale read was served (of 40 eventually consistent), though stale reads are on',
    ]);
    expect(faithfulProblems(undefined, both)).toEqual(['the stack runs no AWS-faithful layer']);
    const staleOnly = faithfulExpectation({ AWS_FAITHFUL_FAULT_RATE: '0' });
    expect(staleOnly).toEqual({ faults: false, stale: true });
    expect(faithfulProblems(some, staleOnly)).toEqual(['4 faults were injected, though AWS_FAITHFUL_FAULT_RATE is 0']);
    expect(faithfulProblems({ ...some, faults: {} }, staleOnly)).toEqual([]);
  });
});
