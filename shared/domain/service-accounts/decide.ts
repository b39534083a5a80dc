/**
 * Service accounts: the rules of each command and of the token grant as pure functions (no I/O, no clock, no id
 * or secret generation). service.ts hashes the new secret, reads the account, calls these, and writes once.
 */
import { isAdmin, type Caller } from '#shared/auth/caller.ts';
import type { GrantableScope } from '#shared/auth/scopes.ts';
import { accept, type Decision } from '#shared/decision.ts';
import type { ServiceAccountRecord, ServiceAccountStatus } from '#shared/domain/service-accounts/entity.ts';
import { ForbiddenError, type AppError } from '#shared/errors.ts';

export interface ServiceAccountCreateInput {
  name: string;
  scopes: GrantableScope[];
}
export type ServiceAccountUpdateInput = Partial<ServiceAccountCreateInput> & { status?: ServiceAccountStatus };

/** Admin users only, in every verb: a service token never manages service accounts (it could widen itself). */
export const serviceAccountAdminRefusal = (caller: Caller): AppError | undefined =>
  isAdmin(caller) && !caller.service ? undefined : new ForbiddenError('Only admins manage service accounts');

const distinct = (scopes: GrantableScope[]) => [...new Set(scopes)];

export function decideCreateServiceAccount(
  caller: Caller,
  input: ServiceAccountCreateInput,
  now: string,
  ids: { uuid: string; clientId: string; secretHash: string },
): Decision<ServiceAccountRecord> {
  return accept({
    uuid: ids.uuid,
    name: input.name.trim(),
    scopes: distinct(input.scopes),
    status: 'active',
    client_id: ids.clientId,
    secret_hash: ids.secretHash,
    creator_uuid: caller.userId,
    secret_rotated_at: now,
    created_at: now,
    updated_at: now,
  });
}

export function decideUpdateServiceAccount(
  a: ServiceAccountRecord,
  input: ServiceAccountUpdateInput,
  now: string,
): Decision<ServiceAccountRecord> {
  return accept({
    ...a,
    name: input.name?.trim() ?? a.name,
    scopes: input.scopes ? distinct(input.scopes) : a.scopes,
    status: input.status ?? a.status,
    updated_at: now,
  });
}

/** A new secret replaces the old one at once: the old one gets no new token (tokens already issued run out within 900 s). */
export const decideRotateSecret = (a: ServiceAccountRecord, secretHash: string, now: string): Decision<ServiceAccountRecord> =>
  accept({ ...a, secret_hash: secretHash, secret_rotated_at: now, updated_at: now });

/** RFC 6749 section 5.2's refusals of the token endpoint. */
export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type' | 'invalid_scope';
export interface OAuthRefusal {
  error: OAuthErrorCode;
  description: string;
}

/**
 * The scopes a token gets, or the refusal: an unknown client, a wrong secret and a disabled account are one
 * answer (invalid_client), so the endpoint never tells which; `requested` (the `scope` parameter) must be a
 * subset of the account's scopes (invalid_scope), and without it the token gets them all.
 */
export function decideTokenGrant(
  account: ServiceAccountRecord | undefined,
  secretMatches: boolean,
  requested: string | undefined,
): { scopes: string[] } | OAuthRefusal {
  if (!account || !secretMatches || account.status !== 'active')
    return { error: 'invalid_client', description: 'Client authentication failed' };
  if (requested === undefined) return { scopes: account.scopes };
  const wanted = [...new Set(requested.split(' ').filter(Boolean))];
  const held = new Set<string>(account.scopes);
  const outside = wanted.filter((s) => !held.has(s));
  if (wanted.length === 0 || outside.length)
    return { error: 'invalid_scope', description: outside.length ? `Not granted to this client: ${outside.join(' ')}` : 'scope is empty' };
  return { scopes: wanted };
}
