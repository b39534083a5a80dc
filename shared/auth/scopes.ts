import type { Role } from '#shared/domain/users/entity.ts';
import { AppError } from '#shared/errors.ts';
import { contextValue } from '#shared/request-context.ts';

/**
 * OAuth scopes (contract section 17): each route row names the one it needs (shared/routes/*.ts), API Gateway's
 * JWT authorizer checks it deployed and the scopeCheck middleware checks it again (locally the only check).
 * `service_accounts` is this service's own addition: only an admin user's token carries it, a service account
 * can never be granted it, so a scoped credential cannot mint itself a wider one.
 */
export const SCOPES = [
  'goals:read',
  'goals:write',
  'directory:read',
  'directory:write',
  'data_sources',
  'webhooks',
  'events:read',
  'scim',
  'service_accounts',
] as const;
export type Scope = (typeof SCOPES)[number];

/** What each scope allows, for the OpenAPI document and docs/architecture.md. */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'goals:read': 'Read goals, check-ins, imports, history, shareables, documents, notifications',
  'goals:write': 'Write goals, check-ins, imports, shareables and their grants and access requests, document refreshes',
  'directory:read': 'Read users, teams, labels, time periods',
  'directory:write': 'Write users, teams, labels, time periods',
  data_sources: 'Data sources and connector requests',
  webhooks: 'Webhook endpoints and their deliveries',
  'events:read': 'The event feed',
  scim: 'SCIM 2.0 provisioning',
  service_accounts: "Manage service accounts (an admin user's token only; never granted to a service account)",
};

/** The claim that marks a service account's token; the service then reads the account, not a user, as the caller. */
export const PRINCIPAL_TYPE_CLAIM = 'principal_type';
export const SERVICE_ACCOUNT_PRINCIPAL = 'service_account';

/** The scopes a service account may hold: every scope but the one that manages service accounts. */
export const GRANTABLE_SCOPES = SCOPES.filter((s): s is Exclude<Scope, 'service_accounts'> => s !== 'service_accounts');
export type GrantableScope = (typeof GRANTABLE_SCOPES)[number];

/**
 * The scopes a user's token carries: those of every area its role may act in at all, its role still deciding each
 * request. Members and viewers alike get the areas every user works in (viewers write access requests and
 * connector requests there, and are refused the rest by their role, 403 forbidden as before); only admins get the
 * admin-only areas (webhooks, the event feed, SCIM, service accounts).
 */
export function roleScopes(role: Role): Scope[] {
  if (role === 'admin') return [...SCOPES];
  return ['goals:read', 'goals:write', 'directory:read', 'directory:write', 'data_sources'];
}

/**
 * The scopes of a token's `scope` claim (space-separated, RFC 6749 section 3.3), as the JWT authorizer hands the
 * claims over; API Gateway hands a JSON array claim as `[a b]`, so brackets are dropped too.
 */
export function scopesOfClaim(claim: unknown): Set<string> {
  if (typeof claim !== 'string') return new Set();
  return new Set(
    claim
      .replace(/^\[|\]$/g, '')
      .split(' ')
      .filter(Boolean),
  );
}

/**
 * A token's `iat` (RFC 7519 section 4.1.6, seconds since the epoch): a number as the local stack hands the claims
 * over, a string of digits as API Gateway's JWT authorizer does; undefined for anything else.
 */
export function issuedAtOfClaim(claim: unknown): number | undefined {
  const n = typeof claim === 'number' ? claim : typeof claim === 'string' && /^\d{1,12}$/.test(claim) ? Number(claim) : Number.NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** 403 `insufficient_scope` (RFC 6750 section 3.1) in the contract's error shape, naming the scope needed. */
export class InsufficientScopeError extends AppError {
  constructor(needed: string) {
    super(
      403,
      'insufficient_scope',
      `This token lacks the scope ${needed}`,
      [{ field: 'scope', code: 'insufficient_scope', message: `needs ${needed}` }],
      {
        'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${needed}"`,
      },
    );
  }
}

/**
 * The scope the running route needs: its row's `scope`, which infra/ puts in the function's ROUTE_SCOPE and the
 * local stack (one process for every route) in the request's context. Neither set is a wiring mistake: it throws
 * (500), it never lets a request through unchecked.
 */
export function requiredScope(): string {
  const scope = contextValue('routeScope') ?? process.env.ROUTE_SCOPE;
  if (!scope) throw new Error('This route names no scope (ROUTE_SCOPE is unset)');
  return scope;
}
