import { describe, expect, it, vi } from 'vitest';
import type { Caller } from '#shared/auth/caller.ts';
import { InsufficientScopeError, issuedAtOfClaim } from '#shared/auth/scopes.ts';
import { decided } from '#shared/decision.ts';
import {
  decideCreateServiceAccount,
  decideRotateSecret,
  decideServiceToken,
  tokenIssuableInMs,
  tokensValidFrom,
  type ServiceToken,
} from '#shared/domain/service-accounts/decide.ts';
import { clientIdOf, type ServiceAccountRecord } from '#shared/domain/service-accounts/entity.ts';
import { UnauthorizedError } from '#shared/errors.ts';
import { withContextValue } from '#shared/request-context.ts';
import { before, fakeEvent, fakeRequest, TENANT, USER } from './support/middleware-request.ts';

const loadCaller = vi.hoisted(() => vi.fn());
vi.mock('#shared/auth/load-caller.ts', () => ({ loadCaller, callerTeamUuids: vi.fn() }));
const { caller } = await import('#shared/http/middleware/caller.ts');

const ACCOUNT = '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f';
const created = '2026-01-01T00:00:00.000Z';
const rotatedAt = '2026-01-01T00:10:00.250Z';
const rotatedSecond = Date.parse(rotatedAt) / 1000 - 0.25; // the rotation's whole second, as an `iat`

const admin = { tenantId: TENANT, userId: 'u', role: 'admin' } as Caller;
const fresh = (): ServiceAccountRecord =>
  decided(
    decideCreateServiceAccount(admin, { name: 'bot', scopes: ['goals:read', 'directory:read'] }, created, {
      uuid: ACCOUNT,
      clientId: clientIdOf(TENANT, ACCOUNT),
      secretHash: 'h',
    }),
  );
const rotated = () => decided(decideRotateSecret(fresh(), 'h2', rotatedAt));
const token = (over: Partial<ServiceToken> = {}): ServiceToken => ({
  scopes: new Set(['goals:read', 'directory:read']),
  issuedAt: rotatedSecond + 1,
  needs: 'goals:read',
  ...over,
});
const errorOf = (outcome: ReturnType<typeof decideServiceToken>) => ('error' in outcome ? outcome.error : undefined);

describe('a service account`s token acts with the account as it is now (contract 19)', () => {
  it('acts with the scopes of its claim the account still holds, and needs the route`s among them', () => {
    const narrowed = { ...rotated(), scopes: ['directory:read' as const] };
    expect(decideServiceToken(rotated(), token())).toEqual({ scopes: new Set(['goals:read', 'directory:read']) });
    expect(decideServiceToken(narrowed, token({ needs: 'directory:read' }))).toEqual({ scopes: new Set(['directory:read']) });
    const refused = errorOf(decideServiceToken(narrowed, token()));
    expect(refused).toBeInstanceOf(InsufficientScopeError);
    expect(refused?.headers['WWW-Authenticate']).toBe('Bearer error="insufficient_scope", scope="goals:read"');
    // widened again: never beyond what the token claims
    const widened = { ...rotated(), scopes: ['goals:read' as const, 'goals:write' as const] };
    expect(decideServiceToken(widened, token({ scopes: new Set(['goals:read']) }))).toEqual({ scopes: new Set(['goals:read']) });
    expect(errorOf(decideServiceToken(widened, token({ scopes: new Set(['goals:read']), needs: 'goals:write' })))).toBeInstanceOf(
      InsufficientScopeError,
    );
  });

  it('refuses a token issued before the last rotation, in the rotation`s own second too, and one without an iat', () => {
    for (const issuedAt of [rotatedSecond - 60, rotatedSecond, undefined])
      expect(errorOf(decideServiceToken(rotated(), token({ issuedAt })))).toBeInstanceOf(UnauthorizedError);
    expect(errorOf(decideServiceToken(rotated(), token({ issuedAt: rotatedSecond + 1 })))).toBeUndefined();
    // the 401 comes before the scopes: a stale token learns nothing of the account's scopes
    expect(errorOf(decideServiceToken(rotated(), token({ issuedAt: rotatedSecond, needs: 'webhooks' })))).toBeInstanceOf(UnauthorizedError);
    // never rotated: every token of it is younger than its secret
    expect(tokensValidFrom(fresh())).toBeUndefined();
    expect(errorOf(decideServiceToken(fresh(), token({ issuedAt: Date.parse(created) / 1000 })))).toBeUndefined();
  });

  it('holds a token asked for within the rotation`s second until the next one, and no other', () => {
    expect(tokensValidFrom(rotated())).toBe(rotatedSecond + 1);
    expect(tokenIssuableInMs(rotated(), Date.parse(rotatedAt))).toBe(750);
    expect(tokenIssuableInMs(rotated(), Date.parse(rotatedAt) + 749)).toBe(1);
    expect(tokenIssuableInMs(rotated(), (rotatedSecond + 1) * 1000)).toBe(0);
    expect(tokenIssuableInMs(fresh(), Date.parse(created))).toBe(0);
    // a rotation on a whole second: the tokens of that second are issued after it, and valid
    const onTheSecond = decided(decideRotateSecret(fresh(), 'h3', '2026-01-01T00:20:00.000Z'));
    expect(tokensValidFrom(onTheSecond)).toBe(Date.parse('2026-01-01T00:20:00.000Z') / 1000);
    expect(tokenIssuableInMs(onTheSecond, Date.parse('2026-01-01T00:20:00.000Z'))).toBe(0);
  });

  it('reads `iat` as the local stack hands it (a number) and as API Gateway does (a string of digits)', () => {
    expect(issuedAtOfClaim(1767225600)).toBe(1767225600);
    expect(issuedAtOfClaim('1767225600')).toBe(1767225600);
    for (const bad of [undefined, null, '', '1e9', '-5', '12.5', 1.5, -1, '99999999999999', { a: 1 }])
      expect(issuedAtOfClaim(bad)).toBeUndefined();
  });

  it('the caller middleware hands a service token`s claim scopes, iat and the route`s scope to the caller`s read', async () => {
    loadCaller.mockReturnValue(new Promise(() => undefined));
    const data = { tenantId: TENANT, db: {} as never };
    const claims = { tenant_uuid: TENANT, user_uuid: USER, principal_type: 'service_account', scope: 'goals:read scim', iat: '1767225600' };
    const request = fakeRequest({
      event: fakeEvent({ claims }),
      internal: { data, userId: USER, readAhead: { entities: [], teams: false } },
    });
    await withContextValue('routeScope', 'scim', () => before(caller(), request));
    expect(loadCaller).toHaveBeenLastCalledWith(data, USER, {
      readAhead: [],
      teams: false,
      service: { scopes: new Set(['goals:read', 'scim']), issuedAt: 1767225600, needs: 'scim' },
    });
    // a user's token: no service token to check
    const userRequest = fakeRequest({ internal: { data, userId: USER, readAhead: { entities: [], teams: false } } });
    await withContextValue('routeScope', 'scim', () => before(caller(), userRequest));
    expect(loadCaller).toHaveBeenLastCalledWith(data, USER, { readAhead: [], teams: false, service: false });
  });
});
