import type { JWTVerifyGetKey } from 'jose';
import { UnauthorizedError } from '#shared/errors.ts';
import type { ApiEvent } from '#shared/http/api.ts';

/**
 * The /mcp route's own bearer check (docs/architecture.md, "MCP"): API Gateway's JWT authorizer cannot add the
 * `WWW-Authenticate: Bearer resource_metadata=...` header an MCP client needs to its 401, so the route has no
 * gateway authorizer and the function checks the same JWT as that authorizer would: the issuer's keys found by
 * its discovery document, RSA signatures only, a `kid`, iss, aud, exp (required), nbf and an `iat` in the past.
 */

/** The issuer's key set, found once per container as the gateway finds it (OpenID discovery, then jwks_uri). */
let keySet: Promise<JWTVerifyGetKey> | undefined;
const issuerKeys = (issuer: string) =>
  (keySet ??= (async () => {
    const { createRemoteJWKSet } = await import('jose');
    const res = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
    const jwksUri = res.ok ? ((await res.json()) as { jwks_uri?: unknown }).jwks_uri : undefined;
    if (typeof jwksUri !== 'string') throw new Error(`The issuer ${issuer} publishes no jwks_uri`);
    return createRemoteJWKSet(new URL(jwksUri));
  })().catch((err: unknown) => {
    keySet = undefined; // an issuer briefly down is asked again by the next request
    throw err;
  }));

/** Tokens verified in this container, until they expire: a token's signature, issuer and audience do not change. */
const verified = new Map<string, { claims: Record<string, string>; exp: number }>();

/** The claims as the gateway's authorizer hands them on: every value a string, an array as `[a b]`, an object as JSON. */
const asAuthorizerClaims = (payload: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(payload).map(([k, v]) => [
      k,
      Array.isArray(v) ? `[${v.join(' ')}]` : v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v),
    ]),
  );

/**
 * The bearer token's claims, put on the event where the gateway's authorizer puts them (so the caller is read as
 * on every route), or 401 with the header naming the protected-resource document.
 */
export async function verifyBearer(event: ApiEvent, resourceMetadataUrl: string): Promise<void> {
  const refuse = (message: string) => {
    const err = new UnauthorizedError(message);
    Object.assign(err.headers, { 'WWW-Authenticate': `Bearer resource_metadata="${resourceMetadataUrl}"` });
    return err;
  };
  const m = /^Bearer\s+(\S+)$/i.exec(event.headers?.authorization ?? '');
  if (!m) throw refuse('A bearer token is required');
  const token = m[1]!;
  const now = Date.now() / 1000;
  let known = verified.get(token);
  if (!known || known.exp <= now) {
    const issuer = process.env.ISSUER_URL;
    if (!issuer) throw new Error('Missing required environment variable ISSUER_URL');
    const { jwtVerify } = await import('jose');
    try {
      const { payload, protectedHeader } = await jwtVerify(token, await issuerKeys(issuer), {
        issuer,
        // DEFAULT_AUDIENCE of shared/auth/issuer.ts, which would load jose at cold start
        audience: process.env.JWT_AUDIENCE || 'goal-tracking-api',
        algorithms: ['RS256', 'RS384', 'RS512'],
        requiredClaims: ['exp'],
      });
      if (!protectedHeader.kid) throw new Error('no kid');
      if (typeof payload.iat !== 'number' || payload.iat > now + 5) throw new Error('bad iat');
      known = { claims: asAuthorizerClaims(payload), exp: payload.exp! };
    } catch {
      throw refuse('The bearer token is not valid');
    }
    verified.set(token, known);
    if (verified.size > 10_000) verified.delete(verified.keys().next().value!);
  }
  const ctx = event.requestContext as unknown as Record<string, unknown>;
  ctx.authorizer = { principalId: '', integrationLatency: 0, jwt: { claims: known.claims, scopes: [] } };
}
