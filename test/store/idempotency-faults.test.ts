import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { config } from '#shared/config.ts';
import { createDynamoClient, instrument, type Db } from '#shared/db/client.ts';
import { IDEMPOTENCY_SK, idempotencyRecordKey } from '#shared/db/idempotency-store.ts';
import { keys } from '#shared/db/keys.ts';
import { IdempotencyKeyInUseError } from '#shared/http/http-errors.ts';
import { runIdempotent } from '#shared/http/idempotency.ts';
import { idsAreSeeded, newId } from '#shared/ids.ts';
import { eventually } from '../support/eventually.ts';
import { type Attempt, keysOf, type ScriptedFault, scriptedFaults } from '../support/store-faults.ts';

/**
 * Contract section 11: a first attempt that ended in 5xx does not keep its Idempotency-Key, whatever store fault
 * follows the lock (runIdempotent over TenantIdempotencyStore, against DynamoDB Local, with exact faults on the
 * idempotency record's writes). A resend runs again with the same ids, so a write the first attempt applied
 * before its 5xx is found, not made twice.
 */
const THING = 'idem_fault_thing';
const ROUTE = 'POST /rest/v2/things';

/** A client as the service builds one, the faults `rule` names on it. */
function faultyDb(rule: (attempt: Attempt) => ScriptedFault) {
  const client = createDynamoClient();
  const { faults } = scriptedFaults(client, rule);
  return { db: instrument(client), faults };
}
const isRecord = (a: Attempt) => keysOf(a).some((pk) => pk.includes('#idem#'));
/** The first `n` attempts of `call` on the idempotency record fail (`applied`: the first after it took effect). */
function failing(call: string, n: number, first: ScriptedFault = 'internal') {
  let left = n;
  return (a: Attempt): ScriptedFault => {
    if (a.call !== call || !isRecord(a) || left <= 0) return undefined;
    return left-- === n ? first : 'internal';
  };
}

const context = (lockMs: number) => ({ awsRequestId: 'idem-faults', getRemainingTimeInMillis: () => lockMs }) as unknown as Context;
const clean = instrument(createDynamoClient());

interface Things {
  tenantId: string;
  userId: string;
  key: string;
  /** How many times the request's work ran, and the records it named. */
  runs: string[];
}
const newScope = (): Things => ({ tenantId: randomUUID(), userId: randomUUID(), key: randomUUID(), runs: [] });

/**
 * The request's work as a create command does it: a record named by a seeded id, created only if absent; a
 * retry's create that finds it answers it (what the service's creates do, shared/ids.ts). `after` may turn the
 * answer into a 5xx or a crash once the write took effect.
 */
const work =
  (t: Things, db: Db, after?: () => { statusCode: number; body: string } | never) =>
  async (): Promise<{ statusCode: number; body: string }> => {
    const id = newId();
    t.runs.push(id);
    await db
      .send(
        new PutCommand({
          TableName: config.tableName,
          Item: { ...keys.entity(t.tenantId, THING, id), id },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      )
      .catch((err: Error) => (err.name === 'ConditionalCheckFailedException' && idsAreSeeded() ? undefined : Promise.reject(err)));
    return after?.() ?? { statusCode: 201, body: JSON.stringify({ uuid: id }) };
  };

const send = (t: Things, db: Db, lockMs: number, run: () => Promise<{ statusCode: number; body: string }>) =>
  runIdempotent(
    {
      db,
      tenantId: t.tenantId,
      userId: t.userId,
      route: ROUTE,
      params: {},
      key: t.key,
      body: { kind: 'json', value: { name: 'thing' } },
      context: context(lockMs),
      authorizeReplay: async () => undefined,
    },
    run,
  );

const record = async (t: Things) =>
  (
    await clean.send(
      new GetCommand({
        TableName: config.tableName,
        Key: { PK: idempotencyRecordKey({ ...t, route: ROUTE }), SK: IDEMPOTENCY_SK },
        ConsistentRead: true,
      }),
    )
  ).Item;

/** The work's records stored: every run drew the same id, so one record is one write, however often it was sent. */
const storedIds = async (t: Things) => {
  const found: string[] = [];
  for (const id of new Set(t.runs)) {
    const item = (
      await clean.send(new GetCommand({ TableName: config.tableName, Key: keys.entity(t.tenantId, THING, id), ConsistentRead: true }))
    ).Item;
    if (item) found.push(item.id as string);
  }
  return found;
};

/** The resend after the 5xx, with no fault: it runs again, names the same record, and is then replayed. */
async function resendRunsAgain(t: Things): Promise<void> {
  const retry = await send(t, clean, 10_000, work(t, clean));
  expect(retry.statusCode).toBe(201);
  expect(retry.headers?.['Idempotent-Replayed']).toBeUndefined();
  expect(new Set(t.runs).size).toBe(1); // every run drew the same id
  expect(JSON.parse(retry.body!)).toEqual({ uuid: t.runs[0] });
  const replay = await send(t, clean, 10_000, work(t, clean));
  expect(replay.headers?.['Idempotent-Replayed']).toBe('true');
  expect(replay.body).toBe(retry.body);
  expect(await storedIds(t)).toEqual([t.runs[0]]);
}

describe('Idempotency-Key: store faults after the lock (contract 11: a first attempt ended in 5xx does not keep its key)', () => {
  it('a lock put that applied and then answered 500 on every SDK attempt is removed: the attempt answers 500, the resend runs', async () => {
    const t = newScope();
    const { db, faults } = faultyDb(failing('PutItem', 5, 'applied'));
    await expect(send(t, db, 10_000, work(t, db))).rejects.toMatchObject({ name: 'IdempotencyPersistenceLayerError' });
    expect(faults.get('PutItem')).toBe(5);
    expect(t.runs).toEqual([]); // the work never ran
    expect(await record(t)).toBeUndefined();
    await resendRunsAgain(t);
  });

  it('a write that applied and then answered 5xx, whose lock removal failed every SDK attempt: removed by the next try, the resend finds the write', async () => {
    const t = newScope();
    const { db, faults } = faultyDb(failing('DeleteItem', 5));
    const started = Date.now();
    const first = await send(
      t,
      db,
      10_000,
      work(t, db, () => ({ statusCode: 500, body: '{}' })),
    );
    expect(first.statusCode).toBe(500);
    expect(Date.now() - started).toBeLessThan(10_000); // removed, not waited out
    expect(faults.get('DeleteItem')).toBe(5);
    expect(await record(t)).toBeUndefined();
    await resendRunsAgain(t);
    expect(await storedIds(t)).toEqual([t.runs[0]]);
  });

  it('saving the answer failing every SDK attempt is tried again: the first answer is kept and replayed, the work ran once', async () => {
    const t = newScope();
    const { db, faults } = faultyDb(failing('UpdateItem', 5));
    const first = await send(t, db, 10_000, work(t, db));
    expect(first.statusCode).toBe(201);
    expect(faults.get('UpdateItem')).toBe(5);
    const replay = await send(t, clean, 10_000, work(t, clean));
    expect(replay.headers?.['Idempotent-Replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect(t.runs).toHaveLength(1);
  });

  it('saving the answer failing until the lock expires: 409 while it tries, its 500 only once the lock expired, then the resend runs and writes nothing twice', async () => {
    const t = newScope();
    const lockMs = 3000;
    const { db, faults } = faultyDb((a) => (a.call === 'UpdateItem' && isRecord(a) ? 'internal' : undefined));
    const started = Date.now();
    const first = send(t, db, lockMs, work(t, db)).then(
      () => ({ ended: Date.now(), error: undefined }),
      (error: Error) => ({ ended: Date.now(), error }),
    );
    // past the SDK's own attempts: the store's tries are under way, the first still running
    await eventually(async () => expect(faults.get('UpdateItem') ?? 0).toBeGreaterThan(5), lockMs);
    await expect(send(t, clean, 10_000, work(t, clean))).rejects.toBeInstanceOf(IdempotencyKeyInUseError);
    const { ended, error } = await first;
    expect(error?.name).toBe('IdempotencyPersistenceLayerError');
    expect(ended - started).toBeGreaterThanOrEqual(lockMs);
    expect(t.runs).toHaveLength(1);
    await resendRunsAgain(t);
    expect(await storedIds(t)).toEqual([t.runs[0]]);
  });

  it('a crash whose lock removal fails until the lock expires answers only then; the resend runs', async () => {
    const t = newScope();
    const lockMs = 2000;
    const { db } = faultyDb((a) => (a.call === 'DeleteItem' && isRecord(a) ? 'internal' : undefined));
    const started = Date.now();
    const crash = () => {
      throw new Error('crashed after its write');
    };
    await expect(send(t, db, lockMs, work(t, db, crash))).rejects.toMatchObject({ name: 'IdempotencyPersistenceLayerError' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(lockMs);
    await resendRunsAgain(t);
  });

  it("a late removal never takes a later attempt's lock: an attempt that took over an expired lock still answers 409 to a third", async () => {
    const t = newScope();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = send(t, clean, 500, async () => {
      t.runs.push('first');
      await held;
      throw new Error('the first fails after its lock expired');
    }).catch((e: Error) => e);
    await eventually(async () => expect(await record(t)).toMatchObject({ idem_status: 'INPROGRESS' }));
    await new Promise((r) => setTimeout(r, 600)); // the first's lock expires while it still runs
    let releaseSecond!: () => void;
    const secondHeld = new Promise<void>((r) => (releaseSecond = r));
    const second = send(t, clean, 10_000, async () => {
      await secondHeld;
      return work(t, clean)();
    });
    await eventually(async () => expect((await record(t))?.idem_in_progress_until).toBeGreaterThan(Date.now() + 5000));
    release();
    expect(await first).toMatchObject({ message: 'the first fails after its lock expired' });
    // the first's removal met the second's lock and left it
    await expect(send(t, clean, 10_000, work(t, clean))).rejects.toBeInstanceOf(IdempotencyKeyInUseError);
    releaseSecond();
    expect((await second).statusCode).toBe(201);
  });
  it("a lock put whose first try answered 500 and then met another attempt's lock, put in the same millisecond, is 409: never taken for its own", async () => {
    const t = newScope();
    vi.spyOn(Date, 'now').mockReturnValue(Date.now()); // both locks' expiries, to the millisecond
    try {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const first = send(t, clean, 10_000, async () => {
        await held;
        return work(t, clean)();
      });
      await eventually(async () => expect(await record(t)).toMatchObject({ idem_status: 'INPROGRESS' }));
      // the second's put: its first try meets the first's lock (the condition fails) and is answered 500
      const { db, faults } = faultyDb(failing('PutItem', 1, 'applied'));
      await expect(send(t, db, 10_000, work(t, db))).rejects.toBeInstanceOf(IdempotencyKeyInUseError);
      expect(faults.get('PutItem')).toBe(1);
      release();
      expect((await first).statusCode).toBe(201);
      expect(t.runs).toHaveLength(1);
    } finally {
      vi.restoreAllMocks();
    }
  });
});
