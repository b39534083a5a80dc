/**
 * Service accounts: the rules of each command and of the token grant as pure functions (no I/O, no clock, no id
 * or secret generation). service.ts hashes the new secret, reads the account, calls these, and writes once.
 */
import { isAdmin, type Caller } from '#shared/auth/caller.ts';
import { InsufficientScopeError, type GrantableScope } from '#shared/auth/scopes.ts';
import { accept, type Decision } from '#shared/decision.ts';
import type { ServiceAccountRecord, ServiceAccountStatus } from '#shared/domain/service-accounts/entity.ts';
import { ForbiddenError, UnauthorizedError, type AppError } from '#shared/errors.ts';

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

/**
 * A new secret replaces the old one at once: the old one gets no new token, and the tokens issued before the
 * rotation are refused from now on (serviceTokenRefusal: `secret_rotated_at` is the instant they end at).
 */
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

/**
 * The first `iat` (whole seconds, as a JWT carries it) a token of the account may have: the second after its last
 * rotation began, so every token issued before the rotation (its `iat` at most the rotation's second) is refused,
 * and the token endpoint holds a token asked for within the rotation's second until the next one begins
 * (tokenIssuableInMs). Undefined for an account never rotated: no token of it predates its secret.
 */
export function tokensValidFrom(a: Pick<ServiceAccountRecord, 'secret_rotated_at' | 'created_at'>): number | undefined {
  if (a.secret_rotated_at === a.created_at) return undefined;
  const at = Date.parse(a.secret_rotated_at);
  return Number.isFinite(at) ? Math.ceil(at / 1000) : undefined;
}

/** How long from `nowMs` until a token of the account may be issued (0: now): its `iat` must not precede tokensValidFrom. */
export function tokenIssuableInMs(a: Pick<ServiceAccountRecord, 'secret_rotated_at' | 'created_at'>, nowMs: number): number {
  const from = tokensValidFrom(a);
  return from === undefined ? 0 : Math.max(0, from * 1000 - nowMs);
}

/** What a service account's token presents: its `scope` claim, its `iat` and the scope of the route it calls. */
export interface ServiceToken {
  scopes: ReadonlySet<string>;
  issuedAt: number | undefined;
  needs: string;
}

/**
 * A service account's token acts with the account as it is now (contract section 19), the account read in this
 * request: a token issued before the account's last rotation (or without an `iat`) is 401; the token's scopes are
 * those of its claim the account still holds, and the route's scope must be among them (403 insufficient_scope, as
 * the gateway would answer had the token been issued with the account's scopes of now). Else those scopes.
 */
export function decideServiceToken(
  account: Pick<ServiceAccountRecord, 'scopes' | 'secret_rotated_at' | 'created_at'>,
  token: ServiceToken,
): { scopes: ReadonlySet<string> } | { error: AppError } {
  const from = tokensValidFrom(account);
  if (token.issuedAt === undefined || (from !== undefined && token.issuedAt < from))
    return { error: new UnauthorizedError("This token was issued before the service account's secret was rotated") };
  const held = new Set<string>(account.scopes);
  const scopes = new Set([...token.scopes].filter((s) => held.has(s)));
  if (!scopes.has(token.needs)) return { error: new InsufficientScopeError(token.needs) };
  return { scopes };
}

/** What a service account acting as a data source's creator presents: no token, only the scope of what it writes. */
export interface ServiceCreator {
  creatorNeeds: string;
}

/**
 * A service account acting as the creator of a data source (its pushes and syncs, contract 16), read now: no token
 * presents scopes, so the account acts with its scopes as they are now, and the scope of what it writes (`needs`: a
 * check-in, goals:write) must be one of them. A deleted or disabled account, or one without that scope, is refused
 * as a source's creator who left is (401 at the push route; the sync logs the message as its failure).
 */
export function decideServiceCreator(
  account: Pick<ServiceAccountRecord, 'scopes' | 'status'> | undefined,
  needs: string,
): { scopes: ReadonlySet<string> } | { error: AppError } {
  if (account?.status !== 'active')
    return { error: new UnauthorizedError("The data source's creator, a service account, is disabled or deleted") };
  const scopes = new Set<string>(account.scopes);
  if (!scopes.has(needs))
    return { error: new UnauthorizedError(`The data source's creator, a service account, no longer holds the scope ${needs}`) };
  return { scopes };
}
