import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { writeTenantLimits } from '#shared/db/rate-limit-store.ts';
import { RateLimitedError } from '#shared/errors.ts';
import { CredentialBudget } from '#shared/http/credential-budget.ts';
import { RateLimiter, blockFor, shardsFor, type Limit } from '#shared/http/rate-limit.ts';

const table = () => process.env.TABLE_NAME!;

/**
 * Simulated time shared by every container. DynamoDB Local on a loaded machine takes anything from 5 ms to
 * seconds per call, so the simulation advances its own clock in ticks: each tick every container serves the
 * requests that arrive in it (against DynamoDB Local, for real), then time moves on. Rates are then measured
 * in simulated seconds, independent of how slow the emulator is today.
 */
class SimClock {
  t = Date.now();
  now = () => this.t;
}

/** A container's limiter, as every Lambda container builds one, against DynamoDB Local. */
const container = (clock: SimClock, limit: Limit, userLimit?: Limit) =>
  new RateLimiter({
    db: async () => baseDb(),
    tableName: table,
    now: clock.now,
    defaults: () => ({ rps: limit.rps, burst: limit.burst, userRps: userLimit?.rps ?? 0, userBurst: userLimit?.burst }),
  });

/**
 * Every container receives `perContainerRps` requests per simulated second for `seconds`; returns the simulated
 * times (ms since start) of the admitted ones and the number refused.
 */
async function flood(
  clock: SimClock,
  limiters: RateLimiter[],
  tenantId: string,
  userOf: (i: number) => string,
  perContainerRps: number,
  seconds: number,
) {
  const tickMs = 20;
  const start = clock.t;
  const admitted: number[] = [];
  let refused = 0;
  const due = limiters.map(() => 0);
  for (let tick = 0; tick < (seconds * 1000) / tickMs; tick++) {
    clock.t = start + tick * tickMs;
    await Promise.all(
      limiters.map(async (limiter, i) => {
        due[i]! += (perContainerRps * tickMs) / 1000;
        for (; due[i]! >= 1; due[i]! -= 1) {
          try {
            await limiter.take(tenantId, userOf(i));
            admitted.push(clock.t - start);
          } catch (err) {
            if (!(err instanceof RateLimitedError)) throw err;
            refused++;
          }
        }
      }),
    );
  }
  return { admitted, refused };
}

const rateBetween = (times: number[], fromMs: number, toMs: number) =>
  times.filter((t) => t >= fromMs && t < toMs).length / ((toMs - fromMs) / 1000);

describe('distributed rate limiter (budget in DynamoDB, leased in blocks)', () => {
  it('holds a tenant to its rate across many containers: admitted rate within 10% of the limit, never above rate × time + burst', async () => {
    const limit = { rps: 250, burst: 50 };
    expect(shardsFor(limit)).toBeGreaterThan(1); // the hot tenant's bucket is split over several items
    expect(blockFor(limit, shardsFor(limit))).toBeGreaterThan(1); // a lease serves several requests
    const clock = new SimClock();
    const tenantId = randomUUID();
    const limiters = Array.from({ length: 12 }, () => container(clock, limit));
    const seconds = 3;
    // 12 containers × 50 rps: 600 rps offered against a limit of 250.
    const { admitted, refused } = await flood(clock, limiters, tenantId, (i) => `user-${i}`, 50, seconds);
    expect(refused).toBeGreaterThan(0);
    expect(admitted.length).toBeLessThanOrEqual(limit.rps * seconds + limit.burst);
    // Steady state, after the first second (burst spent): within 10% of the rate.
    const steady = rateBetween(admitted, 1000, seconds * 1000);
    expect(Math.abs(steady - limit.rps) / limit.rps).toBeLessThanOrEqual(0.1);
  }, 240_000);

  it('gives one user half the tenant by default, so the others still get through', async () => {
    const limit = { rps: 40, burst: 20 };
    const clock = new SimClock();
    const tenantId = randomUUID();
    const limiters = Array.from(
      { length: 4 },
      () => new RateLimiter({ db: async () => baseDb(), tableName: table, now: clock.now, defaults: () => limit }),
    );
    const seconds = 4;
    // Three containers serve one noisy user (90 rps offered), the fourth a quiet user (10 rps).
    const { admitted } = await flood(clock, limiters.slice(0, 3), tenantId, () => 'noisy', 30, seconds);
    const noisyRate = rateBetween(admitted, 1000, seconds * 1000);
    expect(Math.abs(noisyRate - limit.rps / 2) / (limit.rps / 2)).toBeLessThanOrEqual(0.1);
    // The tenant still has budget for another user right away.
    await limiters[3]!.take(tenantId, 'quiet');
  }, 240_000);

  it('reads the operator-set limits of the tenant and reports them in RateLimit headers; 429 carries Retry-After', async () => {
    const tenantId = randomUUID();
    await writeTenantLimits(baseDb(), table(), tenantId, { rps: 2, burst: 4 });
    const clock = new SimClock(); // time stands still: nothing refills however slow the emulator is
    const limiter = new RateLimiter({ db: async () => baseDb(), tableName: table, now: clock.now, defaults: () => ({ rps: 0, burst: 1 }) }); // service default off: the tenant's own limit applies
    const headers = await limiter.take(tenantId, 'u1');
    expect(headers?.['RateLimit-Policy']).toBe('"user";q=2;w=2, "tenant";q=4;w=2');
    expect(headers?.RateLimit).toMatch(/^"user";r=\d+;t=\d+, "tenant";r=\d+;t=\d+$/);
    await limiter.take(tenantId, 'u1');
    const err = await limiter.take(tenantId, 'u1').then(
      () => undefined,
      (e) => e as RateLimitedError,
    );
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(Number(err!.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(err!.headers.RateLimit).toMatch(/"user";r=0;t=\d+/);
    // Another user of the tenant is not refused by u1's limit.
    await limiter.take(tenantId, 'u2');
  });

  it('holds failed credentials naming a tenant to their budget across containers; past it a container runs one check a refill interval', async () => {
    const limit = { rps: 2, burst: 10 };
    const clock = new SimClock();
    const tenantId = randomUUID();
    const containers = Array.from(
      { length: 6 },
      () =>
        new CredentialBudget({
          limiter: new RateLimiter({ db: async () => baseDb(), tableName: table, now: clock.now, defaults: () => ({ rps: 0, burst: 1 }) }),
          limits: () => ({ tenant: limit }),
          now: clock.now,
        }),
    );
    const seconds = 5;
    const tickMs = 50;
    // Each container gets 10 made-up client ids a second naming the tenant: 60 failures/s offered against 2.
    let worked = 0;
    let admitted = 0;
    let refusedBefore = 0;
    for (let tick = 0; tick < (seconds * 1000) / tickMs; tick++) {
      clock.t += tickMs;
      if (tick % 2) continue;
      await Promise.all(
        containers.map(async (budget) => {
          const named = { tenantId, client: `sa_${randomUUID()}` };
          try {
            budget.check(named);
          } catch (err) {
            if (!(err instanceof RateLimitedError)) throw err;
            refusedBefore++;
            return;
          }
          worked++; // the credential's work (a tenant session, a read, scrypt) runs
          await budget.failed(named).then(
            () => admitted++,
            (err) => {
              if (!(err instanceof RateLimitedError)) throw err;
            },
          );
        }),
      );
    }
    // every failure within the budget took a token of the table's bucket: never more than burst + rate × time
    expect(admitted).toBeGreaterThanOrEqual(limit.burst);
    expect(admitted).toBeLessThanOrEqual(limit.burst + limit.rps * seconds);
    // past it, a container learns the bucket is spent from its own refused charge and refuses before the work
    // for at least a block's refill (here 500 ms): at most one wasted run per container per refusal
    const refusalMs = 1000 / limit.rps;
    expect(worked - admitted).toBeLessThanOrEqual(containers.length * Math.ceil((seconds * 1000) / refusalMs + 1));
    expect(refusedBefore).toBe(containers.length * 50 - worked);
    expect(refusedBefore).toBeGreaterThan(containers.length * 50 * 0.6);
  }, 240_000);

  it('is off without a default or tenant limit: no writes, no headers', async () => {
    const limiter = new RateLimiter({ db: async () => baseDb(), tableName: table, defaults: () => ({ rps: 0, burst: 1 }) });
    for (let i = 0; i < 200; i++) expect(await limiter.take(randomUUID(), 'u')).toBeUndefined();
  });
});
