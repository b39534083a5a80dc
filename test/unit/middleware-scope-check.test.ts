import { afterEach, describe, expect, it } from 'vitest';
import { InsufficientScopeError, roleScopes, SCOPES, scopesOfClaim } from '#shared/auth/scopes.ts';
import { scopeCheck } from '#shared/http/middleware/scope-check.ts';
import { withContextValue } from '#shared/request-context.ts';
import { before, fakeEvent, fakeRequest, TENANT, USER } from './support/middleware-request.ts';

const run = (claims: Record<string, unknown>, scope: string | undefined) =>
  withContextValue('routeScope', scope, () =>
    before(scopeCheck(), fakeRequest({ event: fakeEvent({ claims: { tenant_uuid: TENANT, user_uuid: USER, ...claims } }) })),
  );

describe('scopeCheck middleware', () => {
  afterEach(() => {
    delete process.env.ROUTE_SCOPE;
  });

  it('lets a token holding the route`s scope through', async () => {
    await expect(run({ scope: 'goals:read directory:read' }, 'directory:read')).resolves.toBeUndefined();
  });

  it.each([
    ['no scope claim', {}],
    ['other scopes', { scope: 'goals:write directory:read' }],
    ['a prefix of the scope', { scope: 'goals' }],
  ])('answers 403 insufficient_scope with the RFC 6750 header for %s', async (_, claims) => {
    const err = await run(claims, 'goals:read').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InsufficientScopeError);
    const e = err as InsufficientScopeError;
    expect([e.status, e.code]).toEqual([403, 'insufficient_scope']);
    expect(e.headers['WWW-Authenticate']).toBe('Bearer error="insufficient_scope", scope="goals:read"');
  });

  it('reads the route`s scope from ROUTE_SCOPE deployed, and refuses to run unchecked without one', async () => {
    process.env.ROUTE_SCOPE = 'webhooks';
    await expect(run({ scope: 'webhooks' }, undefined)).resolves.toBeUndefined();
    await expect(run({ scope: 'goals:read' }, undefined)).rejects.toBeInstanceOf(InsufficientScopeError);
    delete process.env.ROUTE_SCOPE;
    await expect(run({ scope: 'webhooks' }, undefined)).rejects.toThrow(/names no scope/);
  });
});

describe('scopes of tokens', () => {
  it('reads a space-separated claim and API Gateway`s rendering of an array claim', () => {
    expect([...scopesOfClaim('goals:read  webhooks')]).toEqual(['goals:read', 'webhooks']);
    expect([...scopesOfClaim('[goals:read webhooks]')]).toEqual(['goals:read', 'webhooks']);
    expect(scopesOfClaim(undefined).size).toBe(0);
  });

  it('gives an admin every scope and the other roles those of the areas every user works in, not the admin-only ones', () => {
    expect(roleScopes('admin')).toEqual([...SCOPES]);
    for (const role of ['member', 'viewer'] as const)
      expect(roleScopes(role)).toEqual(['goals:read', 'goals:write', 'directory:read', 'directory:write', 'data_sources']);
  });
});
