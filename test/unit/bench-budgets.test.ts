import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '#shared/db/client.ts';
import { newDbMetrics, startDbCall, withDbMetrics } from '#shared/db/metrics.ts';
import { dbMetricHeaders } from '#shared/http/middleware/errors-and-logging.ts';
import { RateLimiter } from '#shared/http/rate-limit.ts';
import { BUDGETS, breaches, LIMITER_COLD, NO_LIMITER, rowOf, worstOf } from '../../scripts/lib/bench-budgets.ts';
import { call, METRIC_HEADERS, must, type Measured } from '../../scripts/lib/bench-http.ts';
import { recordingDb, type DbCall } from '../support/limiter-calls.ts';

const measured = (over: Partial<Measured> = {}): Measured => ({
  status: 200,
  body: { data: { record: { uuid: 'g' } } },
  roundTrips: 1,
  calls: 1,
  writes: 0,
  rcu: 1,
  wcu: 0,
  itemsRead: 2,
  limiter: { roundTrips: 0, calls: 0, writes: 0, rcu: 0, wcu: 0 },
  missing: [],
  ms: 1,
  ...over,
});

describe('bench budgets (scripts/lib/bench-budgets.ts)', () => {
  /** A fresh container's limiter calls as the bench measures them today: the limits read and one write per lease. */
  const fresh = { roundTrips: 3, calls: 3, writes: 2, rcu: 0, wcu: 2.5 };

  it('a row within its budget is ok', () => {
    expect(rowOf('get', [measured()], BUDGETS.get).verdict).toBe('ok');
    expect(rowOf('get', [measured({ rcu: 2, limiter: fresh })], BUDGETS.get).verdict).toBe('ok');
  });

  it('a non-2xx answer fails, whatever its counts', () => {
    expect(breaches(measured({ status: 500 }), BUDGETS.get)).toEqual(['status 500']);
    expect(rowOf('get', [measured({ status: 404 })], BUDGETS.get).verdict).toBe('FAIL: status 404');
  });

  it('a missing metrics header fails (a count read as 0 would pass any budget)', () => {
    const r = measured({ roundTrips: 0, rcu: 0, missing: ['x-db-round-trips', 'x-db-read-units'] });
    expect(rowOf('get', [r], BUDGETS.get).verdict).toBe('FAIL: no x-db-round-trips, x-db-read-units');
  });

  it('a row without a budget fails', () => {
    expect(rowOf('users', [measured()], undefined).verdict).toBe('FAIL: no budget');
  });

  it("holds the request's own round trips and RCU to the row's budget: the limiter's unspent room is not the request's", () => {
    // Both passed the old check (request + limiter against budget + 5 rt and 0.5 RCU): 1+3 <= 1+5, 2.5+0 <= 2+0.5.
    expect(breaches(measured({ roundTrips: 3, limiter: fresh }), BUDGETS.get)).toEqual(['3 rt > 1']);
    expect(breaches(measured({ rcu: 2.5, limiter: fresh }), BUDGETS.get)).toEqual(['2.5 RCU > 2']);
    expect(breaches(measured({ roundTrips: 2, rcu: 2.5, limiter: { ...fresh, roundTrips: 0, rcu: 0 } }), BUDGETS.get)).toEqual([
      '2 rt > 1',
      '2.5 RCU > 2',
    ]);
  });

  it("holds the limiter's calls to the row's limiter budget (its documented worst case), whatever room the request leaves", () => {
    const worst = { roundTrips: LIMITER_COLD.roundTrips, calls: 5, writes: LIMITER_COLD.writes, rcu: LIMITER_COLD.rcu, wcu: 4.5 };
    expect(breaches(measured({ limiter: worst }), BUDGETS.get)).toEqual([]);
    // A request that read nothing left the old check a round trip and RCU the limiter could take: no more.
    const idle = { roundTrips: 0, rcu: 0 };
    expect(breaches(measured({ ...idle, limiter: { ...worst, roundTrips: 6 } }), BUDGETS.get)).toEqual(['limiter 6 rt > 5']);
    expect(breaches(measured({ ...idle, limiter: { ...worst, rcu: 1 } }), BUDGETS.get)).toEqual(['limiter 1 RCU > 0.5']);
    expect(breaches(measured({ limiter: { ...worst, writes: 5 } }), BUDGETS.get)).toEqual(['limiter 5 writes > 4']);
    expect(rowOf('get', [measured({ limiter: { ...worst, roundTrips: 6 } })], BUDGETS.get).verdict).toBe('FAIL: limiter 6 rt > 5');
  });

  it("states every row's limiter budget: a request's the limiter's worst case, a worker's run none", () => {
    for (const [name, b] of Object.entries(BUDGETS))
      expect(b.limiter, name).toBe(name === 'syncChanged' || name === 'syncUnchanged' ? NO_LIMITER : LIMITER_COLD);
    expect(LIMITER_COLD).toEqual({ roundTrips: 5, rcu: 0.5, writes: 4 });
    expect(rowOf('get', [measured()], BUDGETS.get)).toMatchObject({ budget: 'rt<=1 RCU<=2', limiter_budget: 'rt<=5 RCU<=0.5 writes<=4' });
  });

  it("holds a worker's run (no rate limiter) to its budget, and any limiter call fails it", () => {
    const sync = measured({ roundTrips: BUDGETS.syncUnchanged.roundTrips, rcu: BUDGETS.syncUnchanged.rcu, writes: 1 });
    expect(breaches(sync, BUDGETS.syncUnchanged)).toEqual([]);
    expect(breaches({ ...sync, roundTrips: sync.roundTrips + 1 }, BUDGETS.syncUnchanged)).toEqual([
      `${BUDGETS.syncUnchanged.roundTrips + 1} rt > ${BUDGETS.syncUnchanged.roundTrips}`,
    ]);
    expect(breaches({ ...sync, rcu: sync.rcu + 0.5 }, BUDGETS.syncUnchanged)).toEqual([
      `${BUDGETS.syncUnchanged.rcu + 0.5} RCU > ${BUDGETS.syncUnchanged.rcu}`,
    ]);
    expect(breaches({ ...sync, limiter: { ...fresh, roundTrips: 1, writes: 0 } }, BUDGETS.syncUnchanged)).toEqual(['limiter 1 rt > 0']);
    expect(rowOf('sync', [sync], BUDGETS.syncUnchanged)).toMatchObject({
      budget: `rt<=${BUDGETS.syncUnchanged.roundTrips} RCU<=${BUDGETS.syncUnchanged.rcu} writes=1`,
      limiter_budget: 'none',
    });
  });

  it('holds every try of a row to the budget, not only the one reported', () => {
    // the steady try reads more of its own (a list's follow-up), the fresh one pays the limiter: each is the worst of one kind
    const steady = measured({ roundTrips: 2 });
    const afterReset = measured({ limiter: fresh });
    expect(rowOf('get', [steady, afterReset], BUDGETS.get).verdict).toBe('FAIL: 2 rt > 1');
    expect(rowOf('get', [afterReset, steady], BUDGETS.get).verdict).toBe('FAIL: 2 rt > 1');
    expect(rowOf('get', [measured(), measured({ limiter: { ...fresh, roundTrips: 6 } })], BUDGETS.get).verdict).toBe(
      'FAIL: limiter 6 rt > 5',
    );
  });

  it("reports the request's worst try and the limiter's worst try, each its own; a failed try above all", () => {
    const warm = measured();
    const cold = measured({ limiter: fresh });
    const heavier = measured({ rcu: 1.5 });
    const longer = measured({ roundTrips: 2, rcu: 0.5 });
    expect(worstOf([warm, cold])).toEqual(cold);
    expect(worstOf([heavier, warm])).toEqual(heavier);
    expect(worstOf([cold, longer])).toEqual({ ...longer, limiter: fresh });
    expect(worstOf([longer, cold])).toEqual({ ...longer, limiter: fresh });
    const failed = measured({ status: 500, roundTrips: 0, missing: [...METRIC_HEADERS] });
    expect(worstOf([cold, failed, warm])).toBe(failed);
  });

  it('sets a target only where the budget is above it (the rows over their target, docs/benchmarks.md)', () => {
    const over = Object.entries(BUDGETS).filter(([, b]) => 'target' in b);
    expect(over.map(([name]) => name).sort()).toEqual(['checkinPage1', 'lastCheckinCursorPage', 'memberGet', 'memberPage1'].sort());
    for (const [name, b] of over) {
      const { target } = b as { target: { roundTrips?: number; rcu?: number }; roundTrips?: number; rcu?: number };
      const budget = b as { roundTrips?: number; rcu?: number };
      if (target.roundTrips !== undefined) expect(budget.roundTrips!, name).toBeGreaterThan(target.roundTrips);
      if (target.rcu !== undefined) expect(budget.rcu!, name).toBeGreaterThan(target.rcu);
    }
  });

  it('names a row over its target where its budget is what the code costs today, and fails it over the budget', () => {
    const get = (rcu: number) => measured({ roundTrips: 1, rcu, limiter: fresh });
    expect(rowOf('memberGet', [get(2.5)], BUDGETS.memberGet)).toMatchObject({
      budget: 'rt<=1 RCU<=2.5 (target 2)',
      over_target: 'RCU 2.5 > 2',
      verdict: 'ok (over target: RCU 2.5 > 2)',
    });
    expect(rowOf('memberGet', [get(2)], BUDGETS.memberGet)).toMatchObject({ over_target: '', verdict: 'ok' });
    expect(rowOf('memberGet', [get(3)], BUDGETS.memberGet).verdict).toBe('FAIL: 3 RCU > 2.5');
  });

  it("holds a create to issue 33's 3 round trips and a check-in to 4, the Idempotency-Key's record included", () => {
    const post = (b: (typeof BUDGETS)['create' | 'checkin'], roundTrips: number) =>
      measured({ roundTrips, writes: b.writes, limiter: fresh });
    expect(rowOf('create', [post(BUDGETS.create, 3)], BUDGETS.create)).toMatchObject({ budget: 'rt<=3 writes=3', verdict: 'ok' });
    expect(rowOf('create', [post(BUDGETS.create, 4)], BUDGETS.create).verdict).toBe('FAIL: 4 rt > 3');
    expect(rowOf('checkin', [post(BUDGETS.checkin, 5)], BUDGETS.checkin).verdict).toBe('FAIL: 5 rt > 4');
    expect(BUDGETS.checkinRollup.roundTrips).toBe(4);
  });
});

describe('bench requests (scripts/lib/bench-http.ts)', () => {
  let close: (() => void) | undefined;
  afterEach(() => close?.());

  /** A server on 127.0.0.1 answering `headers`, recording the request headers it received. */
  const serve = async (headers: Record<string, string>) => {
    const received: IncomingHttpHeaders[] = [];
    const server = createServer((req, res) => {
      received.push(req.headers);
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', ...headers }).end('{"data":{"record":{"uuid":"x"}}}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    close = () => server.close();
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
  };

  it('names the metrics headers an answer lacks', async () => {
    const { url } = await serve({ 'x-db-round-trips': '1', 'x-db-limiter-round-trips': '0' });
    const r = await call(url, 'tok', 'GET', '/x');
    expect(r.missing).toEqual(METRIC_HEADERS.filter((h) => h !== 'x-db-round-trips' && h !== 'x-db-limiter-round-trips'));
    expect(r.roundTrips).toBe(1);
  });

  it('reads every header when all are there, the limiter apart', async () => {
    const { url } = await serve({
      ...Object.fromEntries(METRIC_HEADERS.map((h) => [h, '1'])),
      'x-db-limiter-round-trips': '3',
    });
    const r = await call(url, 'tok', 'GET', '/x');
    expect(r.missing).toEqual([]);
    expect(r.limiter).toEqual({ roundTrips: 3, calls: 1, writes: 1, rcu: 1, wcu: 1 });
  });

  it('sends a measured POST with an Idempotency-Key; a GET and a seeding POST (must) without', async () => {
    const { url, received } = await serve({});
    await call(url, 'tok', 'POST', '/x', { a: 1 });
    await call(url, 'tok', 'POST', '/x', { a: 1 });
    await call(url, 'tok', 'GET', '/x');
    await must(url, 'tok', 'POST', '/x', { a: 1 });
    const keys = received.map((h) => h['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).not.toBe(keys[0]);
    expect(keys[2]).toBeUndefined();
    expect(keys[3]).toBeUndefined();
  });
});

describe("the limiter's calls in the request's metrics headers (x-db-limiter-*)", () => {
  const TENANT = '00000000-0000-4000-8000-000000000001';
  const USER = '00000000-0000-4000-8000-000000000002';
  const saved = process.env.EXPOSE_DB_METRICS;
  afterEach(() => {
    process.env.EXPOSE_DB_METRICS = saved;
  });

  /** recordingDb, each call metered as the instrumented client meters it. */
  const meteredDb = (calls: DbCall[]): Db => {
    const inner = recordingDb(calls);
    return {
      send: async (cmd: { constructor: { name: string } }) => {
        const done = startDbCall(cmd.constructor.name.replace(/Command$/, 'ItemCommand')); // the low-level name, as the SDK gives it
        try {
          return await inner.send(cmd as never);
        } finally {
          done({});
        }
      },
    } as unknown as Db;
  };

  it('reports the limits read and the leases apart from the request, then nothing while the lease lasts, all again after reset()', async () => {
    process.env.EXPOSE_DB_METRICS = 'true';
    const calls: DbCall[] = [];
    const db = meteredDb(calls);
    let now = 1_000_000;
    const limiter = new RateLimiter({ db: async () => db, tableName: () => 't', defaults: () => ({ rps: 0, burst: 1 }), now: () => now });
    const request = () =>
      withDbMetrics(newDbMetrics(), async () => {
        await limiter.take(TENANT, USER);
        return dbMetricHeaders();
      });

    const first = await request();
    // limits read, the user's lease, the tenant's (recordingDb makes each first lease write twice), all in sequence
    expect(calls.length).toBeGreaterThanOrEqual(3);
    expect(first).toMatchObject({
      'x-db-round-trips': '0',
      'x-db-calls': '0',
      'x-db-limiter-round-trips': String(calls.length),
      'x-db-limiter-calls': String(calls.length),
      'x-db-limiter-writes': String(calls.filter((c) => c.action === 'dynamodb:UpdateItem').length),
    });

    now += 1;
    const leased = await request();
    expect(leased).toMatchObject({ 'x-db-limiter-round-trips': '0', 'x-db-limiter-calls': '0' });

    limiter.reset();
    const before = calls.length;
    const fresh = await request();
    expect(calls[before]?.action).toBe('dynamodb:GetItem'); // the limits read again
    expect(fresh['x-db-limiter-round-trips']).toBe(String(calls.length - before));
  });
});
