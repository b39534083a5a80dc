import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Db } from '#shared/db/client.ts';
import { RateLimitedError } from '#shared/errors.ts';
import { CredentialBudget, type Named } from '#shared/http/credential-budget.ts';
import { failedCredentialLimitsFromEnv, RateLimiter, type FailedCredentialLimits } from '#shared/http/rate-limit.ts';

/** The limiter's shard items in memory, each conditional write evaluated as DynamoDB would; every write's partition key recorded. */
function memoryDb(writes: string[]): Db {
  const tat = new Map<string, number>();
  const fail = (pk: string) =>
    Object.assign(new Error('The conditional request failed'), {
      name: 'ConditionalCheckFailedException',
      Item: tat.has(pk) ? { tat: { N: String(tat.get(pk)) } } : undefined,
    });
  return {
    send: async (cmd: {
      input: { Key: { PK: string }; ConditionExpression: string; ExpressionAttributeValues: Record<string, number> };
    }) => {
      const pk = cmd.input.Key.PK;
      const v = cmd.input.ExpressionAttributeValues;
      const old = tat.get(pk);
      writes.push(pk);
      if (cmd.input.ConditionExpression.startsWith('attribute_not_exists')) {
        if (old !== undefined && old >= v[':now']!) throw fail(pk);
        tat.set(pk, v[':tat']!);
        return {};
      }
      if (old === undefined || old < v[':now']! || old > v[':max']!) throw fail(pk);
      tat.set(pk, old + v[':step']!);
      return { Attributes: { tat: old + v[':step']! } };
    },
  } as unknown as Db;
}

const LIMITS: FailedCredentialLimits = {
  client: { rps: 1 / 60, burst: 3 },
  tenant: { rps: 0.2, burst: 5 },
  unproved: { rps: 1, burst: 4 },
};

/**
 * A container's budget on a simulated clock, and a door in front of it as the token endpoint and the push route
 * use it: `check`, then the credential's work (a tenant session and a lookup: `sessions` counts them), then
 * `failed` or `proved`. Answers 'ok', 401 or 429 (with the Retry-After seconds).
 */
function door(limits: FailedCredentialLimits = LIMITS) {
  const clock = { t: 1_000_000 };
  const writes: string[] = [];
  const sessions: string[] = [];
  const db = memoryDb(writes);
  const budget = new CredentialBudget({
    limiter: new RateLimiter({ db: async () => db, tableName: () => 't', defaults: () => ({ rps: 0, burst: 1 }), now: () => clock.t }),
    limits: () => limits,
    now: () => clock.t,
  });
  const attempt = async (named: Named, correct: boolean): Promise<'ok' | 401 | { status: 429; retryAfter: number }> => {
    try {
      budget.check(named);
      sessions.push(named.tenantId);
      if (!correct) {
        await budget.failed(named);
        return 401;
      }
      budget.proved(named);
      return 'ok';
    } catch (err) {
      if (!(err instanceof RateLimitedError)) throw err;
      return { status: 429, retryAfter: Number(err.headers['Retry-After']) };
    }
  };
  return { clock, writes, sessions, attempt, budget };
}

const T = '11111111-1111-4111-8111-111111111111';
const A = { tenantId: T, client: 'sa_aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa' };
const B = { tenantId: T, client: 'sa_bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb' };
const randomClient = (i: number) => ({ tenantId: T, client: `sa_00000000-0000-4000-8000-${String(i).padStart(12, '0')}` });
const randomTenant = (i: number) => ({ tenantId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, client: 'sa_x' });
type Answer = Awaited<ReturnType<ReturnType<typeof door>['attempt']>>;
const status = (a: Answer) => (typeof a === 'object' ? a.status : a);

describe('the failed-credential budget (shared/http/credential-budget.ts, contract section 19)', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('takes its limits from the environment: defaults, overrides, and 0 turning a bucket off', () => {
    expect(failedCredentialLimitsFromEnv()).toEqual({
      client: { rps: 1 / 60, burst: 10 },
      tenant: { rps: 0.2, burst: 20 },
      unproved: { rps: 1, burst: 20 },
    });
    vi.stubEnv('FAILED_CREDENTIAL_CLIENT_RPS', '0.5');
    vi.stubEnv('FAILED_CREDENTIAL_CLIENT_BURST', '4');
    vi.stubEnv('FAILED_CREDENTIAL_TENANT_RPS', '0');
    vi.stubEnv('FAILED_CREDENTIAL_UNPROVED_BURST', '0'); // a burst is at least one
    vi.stubEnv('FAILED_CREDENTIAL_UNPROVED_RPS', 'lots'); // not a number: the default
    expect(failedCredentialLimitsFromEnv()).toEqual({ client: { rps: 0.5, burst: 4 }, tenant: undefined, unproved: { rps: 1, burst: 1 } });
  });

  it('admits a client id`s burst of failures, then refuses with 429 before the work until a failure has refilled', async () => {
    const d = door();
    d.budget.proved(B); // T is proved here; A is not (its failures spend the tenant's bucket too)
    const answers: Answer[] = [];
    for (let i = 0; i < 6; i++) answers.push(await d.attempt(A, false));
    expect(answers.map(status)).toEqual([401, 401, 401, 429, 429, 429]);
    // the 4th did the work and was past the budget; the 5th and 6th were refused before it, without a write
    expect(d.sessions).toHaveLength(4);
    expect(answers[3]).toEqual({ status: 429, retryAfter: 60 });
    expect(answers[5]).toMatchObject({ status: 429 });
    // a correct secret is refused while the client id's budget is spent (telling it apart is the work the budget bounds)
    expect(status(await d.attempt(A, true))).toBe(429);
    expect(d.sessions).toHaveLength(4);
    // one refill interval on: one more try, and the correct secret gets through
    d.clock.t += 60_000;
    expect(await d.attempt(A, true)).toBe('ok');
    // a correct secret spends nothing: the refilled failure is still there
    expect(await d.attempt(A, false)).toBe(401);
    expect(status(await d.attempt(A, false))).toBe(429);
  });

  it('throttles made-up client ids naming a tenant by the tenant`s bucket, while its proved clients are served and limited by their own', async () => {
    const d = door();
    d.budget.proved(B);
    const answers: Array<ReturnType<typeof status>> = [];
    for (let i = 0; i < 12; i++) answers.push(status(await d.attempt(randomClient(i), false)));
    expect(answers).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    expect(d.sessions).toHaveLength(6); // the burst, and the one that found it spent; none after
    // B proved its secret in this container: the tenant's spent bucket does not refuse it
    expect(await d.attempt(B, true)).toBe('ok');
    const own = [];
    for (let i = 0; i < 4; i++) own.push(status(await d.attempt(B, false)));
    expect(own).toEqual([401, 401, 401, 429]);
    // A never proved here: a made-up client id for all this container can tell, refused with the flood
    expect(status(await d.attempt(A, true))).toBe(429);
    // 5 s later the tenant's bucket has one failure again
    d.clock.t += 5_000;
    expect(await d.attempt(A, true)).toBe('ok');
  });

  it('bounds made-up tenants per container before any tenant session: the unproved bucket, refilling one a second', async () => {
    const d = door();
    const answers: Array<ReturnType<typeof status>> = [];
    for (let i = 0; i < 100; i++) answers.push(status(await d.attempt(randomTenant(i), false)));
    expect(answers).toEqual([...Array(4).fill(401), ...Array(96).fill(429)]);
    expect(d.sessions).toHaveLength(4); // the burst; the other 96 cost no session and no write (the bucket is in memory)
    expect(new Set(d.writes.map((pk) => pk.split('#')[1])).size).toBe(4); // charged in the table only within the budget
    d.clock.t += 1000;
    expect(status(await d.attempt(randomTenant(100), false))).toBe(401);
    expect(status(await d.attempt(randomTenant(101), false))).toBe(429);
    // a tenant proved here is not a made-up one: its clients are not refused with the flood
    d.budget.proved(A);
    expect(await d.attempt(A, true)).toBe('ok');
    expect(status(await d.attempt(randomClient(1), false))).toBe(401);
  });

  it('forgets a proved client after provedMs', async () => {
    const clock = { t: 1_000_000 };
    const db = memoryDb([]);
    const budget = new CredentialBudget({
      limiter: new RateLimiter({ db: async () => db, tableName: () => 't', defaults: () => ({ rps: 0, burst: 1 }), now: () => clock.t }),
      limits: () => ({ tenant: { rps: 1 / 3600, burst: 1 } }),
      now: () => clock.t,
      provedMs: 10_000,
    });
    budget.proved(A);
    await budget.failed(randomClient(1)); // the tenant's one failure
    await expect(budget.failed(randomClient(2))).rejects.toBeInstanceOf(RateLimitedError);
    expect(() => budget.check(A)).not.toThrow(); // proved: the tenant's bucket does not apply
    clock.t += 10_001;
    expect(() => budget.check(A)).toThrow(RateLimitedError);
  });

  it('writes only its own items, never the tenant`s or a user`s request buckets', async () => {
    const d = door();
    d.budget.proved(B);
    for (let i = 0; i < 8; i++) await d.attempt(randomClient(i), false);
    for (let i = 0; i < 5; i++) await d.attempt(B, false);
    for (let i = 0; i < 5; i++) await d.attempt(randomTenant(i), false);
    expect(d.writes.length).toBeGreaterThan(0);
    for (const pk of d.writes) expect(pk).toMatch(/^T#[0-9a-f-]{36}#rl#fail#(tenant#0|client#sa_[0-9a-fx-]+#0)$/);
  });

  it('off (no limits): every failure is a 401, nothing written', async () => {
    const d = door({});
    const answers: Array<ReturnType<typeof status>> = [];
    for (let i = 0; i < 30; i++) answers.push(status(await d.attempt(randomTenant(i % 3), false)));
    expect(answers).toEqual(Array(30).fill(401));
    expect(d.writes).toEqual([]);
  });
});
