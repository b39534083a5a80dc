/**
 * The doors of the API (docs/architecture.md, "Doors"): every route row names one (`door` in shared/routes/types.ts)
 * and its handler is built by the one chain builder for that door (shared/http/pipeline.ts), whose stages are the
 * same at every door, in the same order. What differs between doors is this table: how the credential is proved,
 * the dialect its errors are answered in, and when the tenant's limiter is charged.
 *
 * Data only, no imports: the route table, infra/, the local stack and the handlers all read it, and a handler
 * must not load the route table at cold start.
 */

/**
 * How a door proves who calls. `gateway-jwt`: API Gateway's JWT authorizer (locally, the local stack's) checked the
 * token, the function reads its claims; `function-jwt`: no gateway authorizer, the function checks the same JWT
 * itself (shared/mcp/token.ts); `push-secret`: a data source's push secret as the bearer (shared/http/push-handler.ts);
 * `client-secret`: OAuth client credentials proved by the handler (functions/oauth/token.ts); `none`: public.
 */
export type Credential = 'gateway-jwt' | 'function-jwt' | 'push-secret' | 'client-secret' | 'none';

/**
 * The dialect of a door's refusals. `rest`: the contract's `{ error: { code, message } }`; `scim`: RFC 7644's
 * (toScimAnswer); `jsonrpc`: JSON-RPC errors and refused tool results (shared/mcp/); `oauth`: RFC 6749's
 * `{ error, error_description }` (toOAuthAnswer).
 */
export type Dialect = 'rest' | 'scim' | 'jsonrpc' | 'oauth';

/**
 * When the tenant's limiter is charged. `per-request`: once a request, after the caller is proved (read, active);
 * `per-tool-call`: once for a tools/call that will run its tool, nothing for other messages, a 429 answered as the
 * tool's result; `after-secret`: once the client secret is proved (a failure spends the failed-credential budget
 * instead, shared/http/credential-budget.ts); `none`: never.
 */
export type LimiterCharge = 'per-request' | 'per-tool-call' | 'after-secret' | 'none';

export interface DoorSpec {
  credential: Credential;
  dialect: Dialect;
  limiter: LimiterCharge;
  /** @middy/http-security-headers on every answer (the doors that always had them; the others answer as before). */
  securityHeaders: boolean;
  /** Header names lower-cased before the chain reads them (@middy/http-header-normalizer). */
  normalizeHeaders: boolean;
  /** The builder its handlers call (test/unit/doors.test.ts checks each row's handler calls it). */
  builder: 'apiHandler' | 'scimHandler' | 'mcpHandler' | 'pushHandler' | 'tokenHandler' | 'publicHandler';
}

export const DOORS = {
  rest: {
    credential: 'gateway-jwt',
    dialect: 'rest',
    limiter: 'per-request',
    securityHeaders: true,
    normalizeHeaders: true,
    builder: 'apiHandler',
  },
  scim: {
    credential: 'gateway-jwt',
    dialect: 'scim',
    limiter: 'per-request',
    securityHeaders: true,
    normalizeHeaders: true,
    builder: 'scimHandler',
  },
  mcp: {
    credential: 'function-jwt',
    dialect: 'jsonrpc',
    limiter: 'per-tool-call',
    securityHeaders: false,
    normalizeHeaders: true,
    builder: 'mcpHandler',
  },
  push: {
    credential: 'push-secret',
    dialect: 'rest',
    limiter: 'per-request',
    securityHeaders: true,
    normalizeHeaders: true,
    builder: 'pushHandler',
  },
  token: {
    credential: 'client-secret',
    dialect: 'oauth',
    limiter: 'after-secret',
    securityHeaders: false,
    normalizeHeaders: false,
    builder: 'tokenHandler',
  },
  public: {
    credential: 'none',
    dialect: 'rest',
    limiter: 'none',
    securityHeaders: false,
    normalizeHeaders: false,
    builder: 'publicHandler',
  },
} as const satisfies Record<string, DoorSpec>;

export type Door = keyof typeof DOORS;

/** A door whose credential API Gateway's JWT authorizer checks: its route gets the authorizer and its scope. */
export const gatewayChecksJwt = (door: Door): boolean => DOORS[door].credential === 'gateway-jwt';
