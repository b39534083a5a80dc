import { describe, expect, it } from 'vitest';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { Api, expectError, newTenant, type Res } from '../support/api.ts';

const expectLimitHeaders = (res: Res) => {
  expect(res.headers.get('ratelimit-policy')).toMatch(/^"user";q=\d+;w=\d+, "tenant";q=\d+;w=\d+$/);
  expect(res.headers.get('ratelimit')).toMatch(/^"user";r=\d+;t=\d+, "tenant";r=\d+;t=\d+$/);
};

describe('per-tenant and per-user rate limits over HTTP (contract section 11)', () => {
  it('set-limits validates its arguments and prints the limits in force; --reset returns to the defaults', async () => {
    const t = await newTenant();
    await expect(runAdmin(['set-limits', '--tenant', t.tenantUuid])).rejects.toThrow(/--rps/);
    await expect(runAdmin(['set-limits', '--tenant', t.tenantUuid, '--rps', '-1'])).rejects.toThrow(/--rps/);
    await expect(runAdmin(['set-limits', '--tenant', t.tenantUuid, '--rps', '5', '--burst', '0'])).rejects.toThrow(/burst/);
    await expect(runAdmin(['set-limits', '--tenant', '00000000-0000-4000-8000-000000000000', '--rps', '5'])).rejects.toThrow(/No tenant/);
    expect(await runAdmin(['set-limits', '--tenant', t.tenantUuid, '--rps', '10', '--burst', '30'])).toEqual({
      tenant_uuid: t.tenantUuid,
      tenant: { rps: 10, burst: 30 },
      user: { rps: 5, burst: 15 },
    });
    expect(
      await runAdmin(['set-limits', '--tenant', t.tenantUuid, '--rps', '10', '--burst', '30', '--user-rps', '8', '--user-burst', '9']),
    ).toMatchObject({ user: { rps: 8, burst: 9 } });
    expect(await runAdmin(['set-limits', '--tenant', t.tenantUuid, '--reset'])).toEqual({
      tenant_uuid: t.tenantUuid,
      tenant: null,
      user: null,
    }); // the suite runs with TENANT_RATE_LIMIT_RPS=0
  });

  it('checks the caller before taking budget, limits each user to half the tenant, answers 429 with Retry-After and RateLimit headers', async () => {
    const t = await newTenant();
    // One token per 100 s: nothing refills during the test, however slow. Users get half: burst 5.
    await runAdmin(['set-limits', '--tenant', t.tenantUuid, '--rps', '0.01', '--burst', '10']);
    const viewer = await t.user({ role: 'viewer' }); // admin: 1 of 5, tenant: 1 of 10
    const gone = await t.user(); // admin 2, tenant 2
    expect((await t.admin.put(`/rest/v2/users/${gone.uuid}`, { user: { status: 'inactive' } })).status).toBe(200); // admin 3, tenant 3

    // Refused callers cost nothing: an inactive user's valid token, and a token the gateway refuses.
    for (let i = 0; i < 15; i++) {
      const res = await gone.api.get('/rest/v2/labels');
      expectError(res, 401, 'unauthorized');
      expect(res.headers.get('ratelimit')).toBeNull();
      expect((await new Api('not-a-token').get('/rest/v2/labels')).status).toBe(401);
    }

    // The viewer has its own 5; every answer, errors included, carries the headers.
    for (let i = 0; i < 4; i++) expectLimitHeaders(await viewer.api.get('/rest/v2/labels'));
    const missing = await viewer.api.get('/rest/v2/labels/00000000-0000-4000-8000-000000000000');
    expectError(missing, 404);
    expectLimitHeaders(missing);
    const refused = await viewer.api.get('/rest/v2/labels');
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit')).toMatch(/^"user";r=0;t=\d+/);
    expect(refused.headers.get('ratelimit-policy')).toBe('"user";q=5;w=1000, "tenant";q=10;w=1000');

    // The tenant has 10 - 3 - 5 = 2 left, the admin 5 - 3 = 2: the admin gets exactly those.
    expect((await t.admin.get('/rest/v2/labels')).status).toBe(200);
    expect((await t.admin.get('/rest/v2/labels')).status).toBe(200);
    const tenantRefused = await t.admin.get('/rest/v2/labels');
    expectError(tenantRefused, 429, 'rate_limited');
    expect(tenantRefused.headers.get('retry-after')).not.toBeNull();
  });

  it('leaves tenants without a limit unlimited when the default is off (TENANT_RATE_LIMIT_RPS=0)', async () => {
    const t = await newTenant();
    const results = await Promise.all(Array.from({ length: 60 }, () => t.admin.get('/rest/v2/labels')));
    expect(results.every((r) => r.status === 200 && r.headers.get('ratelimit') === null)).toBe(true);
  });
});
