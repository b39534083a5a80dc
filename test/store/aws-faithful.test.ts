import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { awsFaithfulLayer, injectedFaults } from '../../scripts/lib/aws-faithful.ts';
import { config } from '#shared/config.ts';
import { instrument } from '#shared/db/client.ts';
import { retryOnConflict, retryTransactionConflicts } from '#shared/db/commands.ts';
import { entryList, entryListPartition } from '#shared/db/entry-lists.ts';
import { entriesOf, queryList } from '#shared/db/index-queries.ts';
import { keys } from '#shared/db/keys.ts';
import { entry, type BaseRecord, type DataCtx, type EntityDef } from '#shared/db/model.ts';
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
/** A client as the service builds one (the SDK's standard retries, 5 attempts) with the layer on it. */
const layered = (opts: { staleMs?: number; faultRate?: number; random?: () => number }) => {
  const client = new DynamoDBClient({
    endpoint: config.dynamoEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 5,
  });
  awsFaithfulLayer({ staleMs: opts.staleMs ?? 0, faultRate: opts.faultRate ?? 0, endpoint: config.dynamoEndpoint!, random: opts.random })(
    client,
  );
  return instrument(client);
};
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
/** Waits until the window of the write that returned at `writtenAt` has passed (a clock condition, not a guess). */
const pastWindow = async (writtenAt: number) => {
  while (Date.now() <= writtenAt + STALE_MS) await new Promise((r) => setTimeout(r, writtenAt + STALE_MS + 5 - Date.now()));
};

describe('AWS-faithful layer', () => {
  it('answers eventually consistent reads and index queries with the state of STALE_MS ago, strongly consistent reads with the current one', async () => {
    const c: DataCtx = { tenantId: randomUUID(), db: layered({ staleMs: STALE_MS }) };
    const owner = randomUUID();
    const a = newThing(owner);
    await new WriteTx(c).create(thing, a).commit();
    let writtenAt = Date.now();
    // a new item: not there yet, except to a strongly consistent read
    expect(await eventual(c, a.uuid)).toBeUndefined();
    expect(await collect(entriesOf(c, thingsByOwner, owner))).toEqual([]);
    expect((await getEntity(c, thing, a.uuid, true))?.record.n).toBe(1);
    await pastWindow(writtenAt);
    expect((await eventual(c, a.uuid))?.record.n).toBe(1);
    expect((await collect(entriesOf(c, thingsByOwner, owner))).map((e) => e.id)).toEqual([a.uuid]);

    // a change: the old version within the window; a move to another list: still in the old one, not yet in the new
    const stored = (await getEntity(c, thing, a.uuid, true))!;
    const other = randomUUID();
    await new WriteTx(c).replace(thing, stored, { ...a, n: 2, owner: other }).commit();
    writtenAt = Date.now();
    expect((await eventual(c, a.uuid))?.record.n).toBe(1);
    expect((await collect(entriesOf(c, thingsByOwner, owner))).map((e) => e.id)).toEqual([a.uuid]);
    expect(await collect(entriesOf(c, thingsByOwner, other))).toEqual([]);
    expect((await getEntity(c, thing, a.uuid, true))?.record.n).toBe(2);
    await pastWindow(writtenAt);
    expect((await eventual(c, a.uuid))?.record.n).toBe(2);
    expect(await collect(entriesOf(c, thingsByOwner, owner))).toEqual([]);
    expect((await collect(entriesOf(c, thingsByOwner, other))).map((e) => e.id)).toEqual([a.uuid]);

    // a delete: still there within the window
    await new WriteTx(c).remove(thing, (await getEntity(c, thing, a.uuid, true))!).commit();
    writtenAt = Date.now();
    expect((await eventual(c, a.uuid))?.record.n).toBe(2);
    expect((await collect(entriesOf(c, thingsByOwner, other))).map((e) => e.id)).toEqual([a.uuid]);
    expect(await getEntity(c, thing, a.uuid, true)).toBeUndefined();
    await pastWindow(writtenAt);
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
      const draws = [0, pick];
      const before = injectedFaults.get(name) ?? 0;
      const out = await read(layered({ faultRate: 0.5, random: () => draws.shift() ?? 0.9 }));
      expect(out).toMatchObject({ Item: { id: a.uuid }, $metadata: { attempts: 2 } });
      expect(injectedFaults.get(name)).toBe(before + 1);
    }
  });

  it('cancels a transaction as a TransactionConflict, which the store answers as a lost race and the runner retries', async () => {
    let conflicts = 0;
    // the first transaction attempt conflicts (its second draw picks the conflict, the last of the four faults)
    const draws = [0, 0.99];
    const c: DataCtx = { tenantId: randomUUID(), db: layered({ faultRate: 0.5, random: () => draws.shift() ?? 0.9 }) };
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
    expect(injectedFaults.get('TransactionCanceledException')).toBe(1);
  });

  it('tells a transaction conflict (nothing written: the same write made again) from a failed condition (an answer)', async () => {
    // A write that reads "already there" as done (a notice, a delivery's claim) must not read a conflict so: the
    // chaos run in this mode lost webhook deliveries that way.
    let draws = [0, 0.99]; // the next attempt conflicts (its second draw picks the conflict)
    const c: DataCtx = { tenantId: randomUUID(), db: layered({ faultRate: 0.5, random: () => draws.shift() ?? 0.9 }) };
    const a = newThing(randomUUID());
    const before = injectedFaults.get('TransactionCanceledException') ?? 0;
    const conflict = await new WriteTx(c)
      .create(thing, a)
      .commit()
      .catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(TransactionConflictError);
    expect(conditionFailed(conflict)).toBe(false);
    expect(await getEntity(c, thing, a.uuid, true)).toBeUndefined();
    // made again while it conflicts: the first attempt conflicts, the second passes
    draws = [0, 0.99];
    let attempts = 0;
    await retryTransactionConflicts(() => (attempts++, new WriteTx(c).create(thing, a).commit()));
    expect(attempts).toBe(2);
    expect(injectedFaults.get('TransactionCanceledException')).toBe(before + 2);
    expect((await getEntity(c, thing, a.uuid, true))?.record.uuid).toBe(a.uuid);
    // a failed condition is the answer: thrown at once, not made again
    attempts = 0;
    const taken = await retryTransactionConflicts(() => (attempts++, new WriteTx(c).create(thing, a).commit())).catch((e: unknown) => e);
    expect(conditionFailed(taken)).toBe(true);
    expect(attempts).toBe(1);
  });
});
