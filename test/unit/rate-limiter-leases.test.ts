import { describe, expect, it } from 'vitest';
import type { Db } from '#shared/db/client.ts';
import { RateLimitedError } from '#shared/errors.ts';
import { blockFor, maxBlockFor, RateLimiter, shardsFor, type Limit } from '#shared/http/rate-limit.ts';

interface Write {
  pk: string;
  form: 'reset' | 'step';
  ok: boolean;
  /** The shard time the write asked for (tokens × the shard's interval). */
  ms: number;
}

/**
 * The shard items in memory, with the two conditional writes of leaseTokens evaluated as DynamoDB would, each
 * answered after a macrotask (so requests that arrive meanwhile find the lease in flight). Records every write.
 */
function memoryDb(writes: Write[]): Db {
  const tat = new Map<string, number>();
  const fail = (pk: string) =>
    Object.assign(new Error('The conditional request failed'), {
      name: 'ConditionalCheckFailedException',
      Item: tat.has(pk) ? { tat: { N: String(tat.get(pk)) } } : undefined,
    });
  return {
    send: async (cmd: {
      constructor: { name: string };
      input: { Key: { PK: string }; ConditionExpression?: string; ExpressionAttributeValues?: Record<string, number> };
    }) => {
      await new Promise((r) => setTimeout(r, 1));
      if (cmd.constructor.name === 'GetCommand') return {};
      const pk = cmd.input.Key.PK;
      const v = cmd.input.ExpressionAttributeValues!;
      const old = tat.get(pk);
      if (cmd.input.ConditionExpression!.startsWith('attribute_not_exists')) {
        const ok = old === undefined || old < v[':now']!;
        writes.push({ pk, form: 'reset', ok, ms: v[':tat']! - v[':now']! });
        if (!ok) throw fail(pk);
        tat.set(pk, v[':tat']!);
        return {};
      }
      const ok = old !== undefined && old >= v[':now']! && old <= v[':max']!;
      writes.push({ pk, form: 'step', ok, ms: v[':step']! });
      if (!ok) throw fail(pk);
      tat.set(pk, old + v[':step']!);
      return { Attributes: { tat: old + v[':step']! } };
    },
  } as unknown as Db;
}

const limiterOf = (writes: Write[], limit: Limit, clock: { t: number }, db = memoryDb(writes)) =>
  new RateLimiter({
    db: async () => db,
    tableName: () => 't',
    defaults: () => ({ rps: limit.rps, burst: limit.burst, userRps: 0 }), // the tenant's bucket alone
    now: () => clock.t,
    random: () => 0,
  });

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'admitted' as const,
    (e) => {
      if (e instanceof RateLimitedError) return 'refused' as const;
      throw e;
    },
  );

describe('the rate limiter`s leases (shared/http/rate-limit.ts)', () => {
  it('16 requests arriving together on a fresh container share one lease: one write, all admitted', async () => {
    const writes: Write[] = [];
    const limiter = limiterOf(writes, { rps: 100_000, burst: 400_000 }, { t: 1_000_000 });
    const results = await Promise.all(Array.from({ length: 16 }, () => outcome(limiter.take('t1', 'u1'))));
    expect(results).toEqual(Array(16).fill('admitted'));
    expect(writes).toMatchObject([{ form: 'reset', ok: true }]); // a fresh bucket is full: its reset first
  });

  it('requests beyond the lease wait for the next one, not one lease each', async () => {
    const writes: Write[] = [];
    const limit = { rps: 100_000, burst: 400_000 };
    const limiter = limiterOf(writes, limit, { t: 1_000_000 });
    const n = blockFor(limit, shardsFor(limit)) * 3;
    const results = await Promise.all(Array.from({ length: n }, () => outcome(limiter.take('t1', 'u1'))));
    expect(results).toEqual(Array(n).fill('admitted'));
    expect(writes.length).toBeLessThanOrEqual(3);
  });

  it('a refused lease refuses every request that waited for it, with one write per shard tried', async () => {
    const writes: Write[] = [];
    const limit = { rps: 10, burst: 2 };
    const clock = { t: 1_000_000 };
    const limiter = limiterOf(writes, limit, clock);
    await limiter.take('t1', 'u1');
    await limiter.take('t1', 'u1'); // the burst spent (a block of one each)
    writes.length = 0;
    const results = await Promise.all(Array.from({ length: 8 }, () => outcome(limiter.take('t1', 'u1'))));
    expect(results).toEqual(Array(8).fill('refused'));
    expect(writes).toMatchObject([{ form: 'step', ok: false }]); // in use now: the step first, refused
  });

  it('a refusal slower than its refusal time still refuses its waiters, with no second write', async () => {
    const writes: Write[] = [];
    const clock = { t: 1_000_000 };
    const inner = memoryDb(writes);
    let slowMs = 0;
    // each call takes `slowMs` of the clock: the refusal's local refusal time (about 100 ms here) is over by its answer
    const slow = { send: async (cmd: never) => inner.send(cmd).finally(() => (clock.t += slowMs)) } as unknown as Db;
    const limiter = limiterOf(writes, { rps: 10, burst: 2 }, clock, slow);
    await limiter.take('t1', 'u1');
    await limiter.take('t1', 'u1');
    writes.length = 0;
    slowMs = 500;
    const results = await Promise.all(Array.from({ length: 8 }, () => outcome(limiter.take('t1', 'u1'))));
    expect(results).toEqual(Array(8).fill('refused'));
    expect(writes).toMatchObject([{ form: 'step', ok: false }]);
  });

  it('a container using its whole shard leases with one write each, once the first lease has found it in use', async () => {
    const writes: Write[] = [];
    const clock = { t: 1_000_000 };
    const limiter = limiterOf(writes, { rps: 100, burst: 20 }, clock); // one shard, blocks of 10 (100 ms of its rate)
    for (let i = 0; i < 200; i++) {
      await limiter.take('t1', 'u1');
      clock.t += 10; // 100 requests/s: the shard's whole rate
    }
    // the first lease starts the new shard's time; the second expects it full again and is told it is in use
    expect(writes.map((w) => `${w.form} ${w.ok}`)).toEqual(['reset true', 'reset false', ...Array(19).fill('step true')]);
  });

  it('a busy container leases larger blocks, up to 100 ms of the shard`s rate; a quiet one shrinks them back', async () => {
    const writes: Write[] = [];
    const limit = { rps: 100_000, burst: 400_000 };
    const clock = { t: 1_000_000 };
    const limiter = limiterOf(writes, limit, clock);
    // 2,000 requests/s for 2 s, one at a time (as one client): 4,000 requests.
    for (let i = 0; i < 4000; i++) {
      await limiter.take('t1', 'u1');
      clock.t += 0.5;
    }
    const max = maxBlockFor(limit, shardsFor(limit));
    expect(max).toBe(625);
    // 20, 40, 80, 160, 320, then 625 each: 5 + ceil((4000 - 620) / 625) leases, one write each (below the shard's
    // rate, the shard refills between leases: each finds it full, as the one before did)
    expect(writes.length).toBe(5 + Math.ceil((4000 - 620) / 625));
    expect(writes.every((w) => w.form === 'reset' && w.ok)).toBe(true);
    // Then one request a second: each lease expires nearly unspent, so the block halves back to where it started.
    writes.length = 0;
    for (let i = 0; i < 8; i++) {
      clock.t += 1000;
      await limiter.take('t1', 'u1');
    }
    expect(writes.every((w) => w.form === 'reset' && w.ok)).toBe(true); // idle: each shard full again, one write
    const interval = 1000 / (limit.rps / shardsFor(limit));
    expect(writes.map((w) => Math.round(w.ms / interval))).toEqual([312, 156, 78, 39, 20, 20, 20, 20]);
  });

  it('the tokens a container holds never exceed one block of the shard`s burst', () => {
    for (const limit of [
      { rps: 50, burst: 200 },
      { rps: 25, burst: 100 },
      { rps: 100_000, burst: 400_000 },
      { rps: 1, burst: 1 },
    ]) {
      const shards = shardsFor(limit);
      expect(maxBlockFor(limit, shards)).toBeGreaterThanOrEqual(blockFor(limit, shards));
      expect(maxBlockFor(limit, shards)).toBeLessThanOrEqual(Math.max(1, Math.floor(limit.burst / shards)));
    }
    expect(maxBlockFor({ rps: 50, burst: 200 }, 1)).toBe(5); // the default limit: no growth at all
  });
});
