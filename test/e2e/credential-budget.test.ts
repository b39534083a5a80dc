import { randomBytes, randomUUID } from 'node:crypto';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { limiterKeys } from '#shared/db/rate-limit-store.ts';
import { failedCredentialLimitsFromEnv, type Limit } from '#shared/http/rate-limit.ts';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { Api, expectError, newTenant, type Res, type TenantFixture } from '../support/api.ts';
import { createPeriod, goal } from './goals.fixture.ts';

/**
 * Contract section 19: a request that has not proved a credential spends no tenant's or user's budget; failed
 * credentials at the token endpoint and the push route spend a budget of their own, per client id and per tenant
 * named (shared/http/credential-budget.ts), 429 with Retry-After past it, while the tenant's callers are served.
 * The suite runs with the service's default failed-credential limits (the stack and this worker read the same
 * environment).
 */
const limits = failedCredentialLimitsFromEnv();
const hex = (uuid: string) => uuid.replaceAll('-', '');

async function tokenRequest(form: Record<string, string>): Promise<Res> {
  return new Api(undefined).request('POST', '/oauth/token', new URLSearchParams(form).toString(), {
    'content-type': 'application/x-www-form-urlencoded',
  });
}
const credentials = (a: { client_id: string; client_secret: string }) => ({
  grant_type: 'client_credentials',
  client_id: a.client_id,
  client_secret: a.client_secret,
});

/** A tenant with a request limit nothing refills during the test (one token per 100 s): any charge shows. */
async function limitedTenant(): Promise<TenantFixture> {
  const t = await newTenant();
  await runAdmin(['set-limits', '--tenant', t.tenantUuid, '--rps', '0.01', '--burst', '20']); // each user: burst 10
  return t;
}

/** The tenant's request bucket and its users' (one shard each at these limits), as stored: what a charge changes. */
async function requestBuckets(tenantId: string, users: string[]) {
  const keys = [limiterKeys.tenantShard(tenantId, 0), ...users.map((u) => limiterKeys.userShard(tenantId, u, 0))];
  const out = await baseDb().send(
    new BatchGetCommand({ RequestItems: { [process.env.TABLE_NAME!]: { Keys: keys, ConsistentRead: true } } }),
  );
  const found = out.Responses?.[process.env.TABLE_NAME!] ?? [];
  return Object.fromEntries(keys.map((k) => [k.PK, found.find((i) => i.PK === k.PK)?.tat ?? null]));
}

/**
 * `send` `n` times in a row: within the budget (`limit`'s burst, and what refilled while they ran) each answer is
 * the door's 401; past it each is 429 with Retry-After. Returns the 429s.
 */
async function failUntilRefused(n: number, limit: Limit, send: (i: number) => Promise<Res>, expect401: (r: Res) => void) {
  const started = Date.now();
  const answers: Res[] = [];
  for (let i = 0; i < n; i++) answers.push(await send(i));
  const refilled = Math.ceil(((Date.now() - started) / 1000) * limit.rps);
  for (const r of answers.slice(0, limit.burst)) expect401(r); // the burst is never refused
  const admitted = answers.filter((r) => r.status === 401).length;
  expect(admitted).toBeGreaterThanOrEqual(limit.burst);
  expect(admitted).toBeLessThanOrEqual(limit.burst + refilled);
  const refused = answers.filter((r) => r.status !== 401);
  expect(refused.length).toBeGreaterThan(0);
  for (const r of refused) {
    expect(r.status).toBe(429);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  }
  return refused;
}

function expectOAuth(res: Res, status: number, error: string) {
  expect({ status: res.status, error: res.body?.error }).toEqual({ status, error });
  expect(typeof res.body.error_description).toBe('string');
  expect(res.headers.get('cache-control')).toBe('no-store');
}

describe('failed credentials spend a budget of their own, never the tenant`s (contract section 19)', () => {
  it('the token endpoint: made-up client ids and a wrong secret are throttled; the tenant`s callers are served and its buckets untouched', async () => {
    expect(limits.client && limits.tenant).toBeTruthy();
    const t = await limitedTenant();
    const create = async (name: string) => {
      const res = await t.admin.post('/service_accounts', { name, scopes: ['goals:read'] });
      expect(res.status).toBe(201);
      return res.body.data.record as { uuid: string; client_id: string; client_secret: string };
    };
    const [a, b] = [await create('target'), await create('bystander')];
    // both prove their secret: a proved client is charged to its tenant, as any caller
    const first = await tokenRequest(credentials(a));
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit')).toMatch(/^"user";r=\d+;t=\d+, "tenant";r=\d+;t=\d+$/);
    expect((await tokenRequest(credentials(b))).status).toBe(200);

    const made = Array.from({ length: 30 }, () => randomUUID());
    const before = await requestBuckets(t.tenantUuid, [t.adminUuid, a.uuid, ...made]);
    expect(before[limiterKeys.tenantShard(t.tenantUuid, 0).PK]).not.toBeNull();

    // 30 made-up account ids naming the tenant: its failed-credential budget (the tenant named)
    const madeUp = await failUntilRefused(
      30,
      limits.tenant!,
      (i) => tokenRequest({ ...credentials(a), client_id: `sa_${hex(t.tenantUuid)}${hex(made[i]!)}` }),
      (r) => expectOAuth(r, 401, 'invalid_client'),
    );
    // 30 wrong secrets of a real client id: its own budget (a client that proved its secret here is not refused
    // with a flood naming its tenant, only for its own failures)
    const guessed = await failUntilRefused(
      30,
      limits.client!,
      (i) => tokenRequest({ ...credentials(a), client_secret: `sas_${randomBytes(32).toString('base64url')}${i}` }),
      (r) => expectOAuth(r, 401, 'invalid_client'),
    );
    // past the budget: 429 in the endpoint's own dialect (RFC 6749 section 5.2's shape)
    for (const r of [...madeUp, ...guessed]) expectOAuth(r, 429, 'rate_limited');

    // nothing of the 60 was charged to the tenant or to any user
    expect(await requestBuckets(t.tenantUuid, [t.adminUuid, a.uuid, ...made])).toEqual(before);
    // the tenant's own callers are served as before
    const admin = await t.admin.get('/rest/v2/labels');
    expect(admin.status).toBe(200);
    expect(admin.headers.get('ratelimit')).toMatch(/"tenant";r=\d+/);
    expect((await tokenRequest(credentials(b))).status).toBe(200);
    // the real secret of the client under attack waits for its budget to refill (Retry-After): it cannot be told
    // from a guess without the check the budget bounds
    const throttled = await tokenRequest(credentials(a));
    expectOAuth(throttled, 429, 'rate_limited');
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(throttled.headers.get('retry-after'))).toBeLessThanOrEqual(Math.ceil(1 / limits.client!.rps));
  });

  it('the push route: made-up sources and a wrong push secret are throttled; the tenant`s callers are served and its buckets untouched', async () => {
    const t = await limitedTenant();
    const period = await createPeriod(t.admin, 'Q', '2026-01-01', '2026-03-31');
    const kr = await goal(t.admin, 'key_results', {
      title: 'Pushed',
      time_period_uuid: period.uuid,
      metric: { start_value: 0, target_value: 100, metric_type: 'reach' },
    } as never);
    const source = async (name: string) => {
      const res = await t.admin.post('/data_sources', { goal_uuid: kr.uuid, name, kind: 'push' });
      expect(res.status).toBe(201);
      return res.body.data.record as { uuid: string; push_secret: string };
    };
    const [s, other] = [await source('target'), await source('bystander')];
    const push = (uuid: string, secret: string, value: number) =>
      new Api(secret).request('POST', `/data_sources/${uuid}/values`, { value });
    expect((await push(s.uuid, s.push_secret, 1)).status).toBe(201);
    expect((await push(other.uuid, other.push_secret, 2)).status).toBe(201);

    const before = await requestBuckets(t.tenantUuid, [t.adminUuid]);
    expect(before[limiterKeys.tenantShard(t.tenantUuid, 0).PK]).not.toBeNull();
    const madeUpSecret = () => `dsp_${hex(t.tenantUuid)}_${randomBytes(32).toString('base64url')}`;

    const madeUp = await failUntilRefused(
      30,
      limits.tenant!,
      () => push(randomUUID(), madeUpSecret(), 3),
      (r) => expectError(r, 401, 'unauthorized'),
    );
    const guessed = await failUntilRefused(
      30,
      limits.client!,
      () => push(s.uuid, madeUpSecret(), 3),
      (r) => expectError(r, 401, 'unauthorized'),
    );
    for (const r of [...madeUp, ...guessed]) expectError(r, 429, 'rate_limited');

    expect(await requestBuckets(t.tenantUuid, [t.adminUuid])).toEqual(before);
    expect((await t.admin.get('/rest/v2/labels')).status).toBe(200);
    expect((await push(other.uuid, other.push_secret, 4)).status).toBe(201);
    const throttled = await push(s.uuid, s.push_secret, 5);
    expectError(throttled, 429, 'rate_limited');
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // no value of the refused pushes was written
    const checkins = await t.admin.get(`/rest/v2/checkins?q[goal_uuid_eq]=${kr.uuid}`);
    expect(checkins.body.data.records.map((c: { value: number }) => c.value).sort()).toEqual([1, 2, 4]);
  });
});
