import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '#shared/db/client.ts';
import { newDbMetrics, startDbCall, withDbMetrics } from '#shared/db/metrics.ts';
import { dbMetricHeaders } from '#shared/http/middleware/errors-and-logging.ts';
import { RateLimiter } from '#shared/http/rate-limit.ts';
import { BUDGETS, breaches, LIMITER_ALLOWANCE, rowOf, worstOf } from '../../scripts/lib/bench-budgets.ts';
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
  it('a row within its budget is ok', () => {
    expect(rowOf('get', measured(), BUDGETS.get).verdict).toBe('ok');
  });

  it('a non-2xx answer fails, whatever its counts', () => {
    expect(breaches(measured({ status: 500 }), BUDGETS.get)).toEqual(['status 500']);
    expect(rowOf('get', measured({ status: 404 }), BUDGETS.get).verdict).toBe('FAIL: status 404');
  });

  it('a missing metrics header fails (a count read as 0 would pass any budget)', () => {
    const r = measured({ roundTrips: 0, rcu: 0, missing: ['x-db-round-trips', 'x-db-read-units'] });
    expect(rowOf('get', r, BUDGETS.get).verdict).toBe('FAIL: no x-db-round-trips, x-db-read-units');
  });

  it('a row without a budget fails', () => {
    expect(rowOf('users', measured(), undefined).verdict).toBe('FAIL: no budget');
  });

  it("holds the request's and the limiter's round trips and RCU together to the budget plus the limiter's allowance", () => {
    const cold = { roundTrips: LIMITER_ALLOWANCE.roundTrips, calls: 3, writes: 2, rcu: LIMITER_ALLOWANCE.rcu, wcu: 2 };
    expect(breaches(measured({ limiter: cold, rcu: 2 }), BUDGETS.get)).toEqual([]);
    expect(breaches(measured({ limiter: { ...cold, roundTrips: 6 } }), BUDGETS.get)).toEqual(['7 rt > 1+5']);
    expect(breaches(measured({ limiter: { ...cold, rcu: 1 }, rcu: 2 }), BUDGETS.get)).toEqual(['3 RCU > 2+0.5']);
  });

  it("holds a worker's run (no rate limiter) to its budget without the limiter's allowance", () => {
    const sync = measured({ roundTrips: BUDGETS.syncUnchanged.roundTrips, rcu: BUDGETS.syncUnchanged.rcu, writes: 1 });
    expect(breaches(sync, BUDGETS.syncUnchanged)).toEqual([]);
    expect(breaches({ ...sync, roundTrips: sync.roundTrips + 1 }, BUDGETS.syncUnchanged)).toEqual([
      `${BUDGETS.syncUnchanged.roundTrips + 1} rt > ${BUDGETS.syncUnchanged.roundTrips}+0`,
    ]);
    expect(breaches({ ...sync, rcu: sync.rcu + 0.5 }, BUDGETS.syncUnchanged)).toEqual([
      `${BUDGETS.syncUnchanged.rcu + 0.5} RCU > ${BUDGETS.syncUnchanged.rcu}+0`,
    ]);
    expect(rowOf('sync', sync, BUDGETS.syncUnchanged).budget).toBe(
      `rt<=${BUDGETS.syncUnchanged.roundTrips} RCU<=${BUDGETS.syncUnchanged.rcu} writes=1`,
    );
  });

  it('keeps the worst try: most round trips with the limiter, then RCU; a failed try above all', () => {
    const warm = measured();
    const cold = measured({ limiter: { roundTrips: 3, calls: 3, writes: 2, rcu: 0.5, wcu: 2 } });
    const heavier = measured({ rcu: 1.5 });
    expect(worstOf([warm, cold])).toBe(cold);
    expect(worstOf([warm, heavier])).toBe(heavier);
    const failed = measured({ status: 500, roundTrips: 0, missing: [...METRIC_HEADERS] });
    expect(worstOf([cold, failed, warm])).toBe(failed);
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
