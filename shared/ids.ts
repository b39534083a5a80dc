import { createHash, createHmac, randomUUID } from 'node:crypto';
import { contextValue, withContextValue } from '#shared/request-context.ts';

/**
 * Ids of the records a request creates. Random, except inside `withIdSeed`: a request that carries an
 * Idempotency-Key draws its ids from a keyed hash of the request (idSeedOf), so a retry of a
 * request that committed and then died (before its idempotency record was completed) names the same records,
 * and its create finds them already there instead of writing a second copy (docs/architecture.md, "Safe retries").
 * Commands draw ids in a fixed order, so the n-th id of a retry is the n-th id of the first attempt.
 */
export interface IdSeed {
  seed: string;
  /** Ids drawn so far: the next id is the hash of `seed#drawn`. */
  drawn: number;
}

/** A uuid in form (any version), either case: what a path, a token or a filter may name a record with. */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A new record id (a UUID v4 in form). */
export function newId(): string {
  const s = contextValue('idSeed');
  if (!s) return randomUUID();
  const h = createHash('sha256')
    .update(`${s.seed}#${s.drawn++}`)
    .digest();
  h[6] = (h[6]! & 0x0f) | 0x40; // version 4
  h[8] = (h[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** True when ids drawn now are seeded: a create that finds its record already stored is a retry's. */
export function idsAreSeeded(): boolean {
  return contextValue('idSeed') !== undefined;
}

/**
 * The id seed of an idempotent request: HMAC-SHA256, keyed with the server's secret (shared/auth/id-seed-secret.ts),
 * of the tenant, user, route, key and request hash (path parameters and body). Deterministic for the same request,
 * so a retry names the same records; keyed, so a client cannot compute another request's ids from a key it can
 * guess (a refresh's thread uuid is its own access proof).
 */
export function idSeedOf(
  secret: Uint8Array,
  scope: { tenantId: string; userId: string; route: string; key: string; requestHash: string },
): string {
  return createHmac('sha256', secret)
    .update(JSON.stringify([scope.tenantId, scope.userId, scope.route, scope.key, scope.requestHash]))
    .digest('base64url');
}

/** Runs `fn` with ids derived from `seed` (the same seed gives the same ids in the same order). */
export function withIdSeed<T>(seed: string, fn: () => Promise<T>): Promise<T> {
  return withContextValue('idSeed', { seed, drawn: 0 }, fn);
}
