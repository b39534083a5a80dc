import { describe, expect, it } from 'vitest';
import { tenantFromClaims } from '#shared/http/middleware/tenant-from-claims.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { before, fakeEvent, fakeRequest, status, TENANT, USER } from './support/middleware-request.ts';

describe('tenantFromClaims middleware', () => {
  it('puts the token`s tenant and user, lower-cased, and a loader on that tenant in request.internal', async () => {
    const request = fakeRequest({ event: fakeEvent({ claims: { tenant_uuid: TENANT.toUpperCase(), user_uuid: USER.toUpperCase() } }) });
    expect(await before(tenantFromClaims(), request)).toBeUndefined();
    expect(request.internal.data.tenantId).toBe(TENANT);
    expect(request.internal.data.db).toBeDefined();
    expect(request.internal.userId).toBe(USER);
    expect(request.internal.loader).toBeInstanceOf(Loader);
    expect(request.internal.loader.ctx).toBe(request.internal.data);
  });

  it.each([
    ['no claims', {}],
    ['no user', { tenant_uuid: TENANT }],
    ['a wildcard tenant', { tenant_uuid: '*', user_uuid: USER }],
    ['a numeric user', { tenant_uuid: TENANT, user_uuid: 7 }],
  ])('answers 401 for %s, putting nothing in request.internal', async (_, claims) => {
    const request = fakeRequest({ event: fakeEvent({ claims }) });
    expect(await status(before(tenantFromClaims(), request))).toBe(401);
    expect(request.internal.data).toBeUndefined();
  });
});
