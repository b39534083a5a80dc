import { describe, expect, it } from 'vitest';
import type { Caller } from '#shared/auth/caller.ts';
import { hashClientSecret, newClientSecret, UNKNOWN_CLIENT_HASH, verifyClientSecret } from '#shared/auth/client-secret.ts';
import {
  decideCreateServiceAccount,
  decideServiceCreator,
  decideTokenGrant,
  serviceAccountAdminRefusal,
} from '#shared/domain/service-accounts/decide.ts';
import { clientIdOf, parseClientId, type ServiceAccountRecord } from '#shared/domain/service-accounts/entity.ts';
import { decided } from '#shared/decision.ts';

const TENANT = '0b8a3c1e-5a4f-4c3e-9a44-2f1d7c9e0a11';
const ACCOUNT = '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f';
const admin = { tenantId: TENANT, userId: 'u', role: 'admin' } as Caller;
const now = '2026-01-01T00:00:00.000Z';

const account = (over: Partial<ServiceAccountRecord> = {}): ServiceAccountRecord => ({
  ...decided(
    decideCreateServiceAccount(admin, { name: ' reader ', scopes: ['goals:read', 'goals:read', 'directory:read'] }, now, {
      uuid: ACCOUNT,
      clientId: clientIdOf(TENANT, ACCOUNT),
      secretHash: 'h',
    }),
  ),
  ...over,
});

describe('service accounts', () => {
  it('creates an active account with distinct scopes, a trimmed name and a client_id naming tenant and account', () => {
    const a = account();
    expect(a).toMatchObject({ name: 'reader', scopes: ['goals:read', 'directory:read'], status: 'active', creator_uuid: 'u' });
    expect(parseClientId(a.client_id)).toEqual({ tenantId: TENANT, accountUuid: ACCOUNT });
    expect(parseClientId(`${a.client_id}0`)).toBeUndefined();
    expect(parseClientId('sa_*')).toBeUndefined();
  });

  it('is managed by admin users only: not members, not service accounts', () => {
    expect(serviceAccountAdminRefusal(admin)).toBeUndefined();
    expect(serviceAccountAdminRefusal({ ...admin, role: 'member' })?.status).toBe(403);
    expect(serviceAccountAdminRefusal({ ...admin, service: { name: 'x', clientId: 'y' } })?.status).toBe(403);
  });

  it('grants the account`s scopes, a subset asked for, and refuses alike an unknown client, a wrong secret and a disabled account', () => {
    expect(decideTokenGrant(account(), true, undefined)).toEqual({ scopes: ['goals:read', 'directory:read'] });
    expect(decideTokenGrant(account(), true, 'directory:read')).toEqual({ scopes: ['directory:read'] });
    expect(decideTokenGrant(account(), true, 'goals:write')).toMatchObject({ error: 'invalid_scope' });
    expect(decideTokenGrant(account(), true, ' ')).toMatchObject({ error: 'invalid_scope' });
    const refused = { error: 'invalid_client', description: 'Client authentication failed' };
    expect(decideTokenGrant(undefined, false, undefined)).toEqual(refused);
    expect(decideTokenGrant(account(), false, undefined)).toEqual(refused);
    expect(decideTokenGrant(account({ status: 'disabled' }), true, undefined)).toEqual(refused);
  });

  it("acts as a data source's creator with its scopes of now: refused (401) once deleted, disabled or without the scope of the write", () => {
    const writer = account({ scopes: ['data_sources', 'goals:write'] });
    expect(decideServiceCreator(writer, 'goals:write')).toEqual({ scopes: new Set(['data_sources', 'goals:write']) });
    const refusal = (a: ServiceAccountRecord | undefined) => {
      const d = decideServiceCreator(a, 'goals:write');
      return 'error' in d ? { status: d.error.status, code: d.error.code, message: d.error.message } : d;
    };
    const gone = { status: 401, code: 'unauthorized', message: "The data source's creator, a service account, is disabled or deleted" };
    expect(refusal(undefined)).toEqual(gone);
    expect(refusal({ ...writer, status: 'disabled' })).toEqual(gone);
    expect(refusal({ ...writer, scopes: ['data_sources', 'goals:read'] })).toEqual({
      status: 401,
      code: 'unauthorized',
      message: "The data source's creator, a service account, no longer holds the scope goals:write",
    });
  });

  it('stores a secret as a salted scrypt hash that only the secret matches', async () => {
    const secret = newClientSecret();
    const [h1, h2] = await Promise.all([hashClientSecret(secret), hashClientSecret(secret)]);
    expect(h1).not.toBe(h2); // a salt per secret
    expect(h1).not.toContain(secret);
    expect(await verifyClientSecret(secret, h1)).toBe(true);
    expect(await verifyClientSecret(`${secret}x`, h1)).toBe(false);
    expect(await verifyClientSecret(secret, UNKNOWN_CLIENT_HASH)).toBe(false);
    expect(await verifyClientSecret(secret, 'garbage')).toBe(false);
  });
});
