import middy, { type MiddlewareObj } from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpSecurityHeaders from '@middy/http-security-headers';
import type { Context } from 'aws-lambda';
import { config } from '#shared/config.ts';
import { newDbMetrics, withDbMetrics } from '#shared/db/metrics.ts';
import { tenantDb } from '#shared/db/tenant-scope.ts';
import { DOORS, type Door } from '#shared/http/doors.ts';
import { caller } from '#shared/http/middleware/caller.ts';
import { errorsAndLogging } from '#shared/http/middleware/errors-and-logging.ts';
import type { ApiEvent, ApiResult, LoggingInternal } from '#shared/http/middleware/internal.ts';
import { pathAndQuery } from '#shared/http/middleware/path-and-query.ts';
import { rateLimit } from '#shared/http/middleware/rate-limit.ts';
import { readAhead } from '#shared/http/middleware/read-ahead.ts';
import { scopeCheck } from '#shared/http/middleware/scope-check.ts';
import { tenantFromClaims } from '#shared/http/middleware/tenant-from-claims.ts';
import { toOAuthAnswer } from '#shared/http/oauth-answer.ts';
import { limitDefaultsFromEnv, RateLimiter } from '#shared/http/rate-limit.ts';
import { transport } from '#shared/http/transport.ts';
import { toScimAnswer } from '#shared/scim/answer.ts';
import { captureLambdaHandler, tracer } from '#shared/tracer.ts';

/** The per-tenant and per-user limiter (contract section 11), one per container, its budget in the table. */
export const rateLimiter = new RateLimiter({ db: tenantDb, tableName: () => config.tableName, defaults: limitDefaultsFromEnv });

/** A stage of the chain: a middy middleware over request.internal (shared/http/middleware/internal.ts). */
export type Stage<I extends LoggingInternal> = MiddlewareObj<ApiEvent, ApiResult, Error, Context, I>;

/**
 * The stages of every door, in this order (docs/architecture.md, "How a request flows"). Each puts what it learns
 * in request.internal, async prerequisites as promises. A door's handler substitutes a stage (or leaves it out, as
 * `null`) only where its row in the door table (shared/http/doors.ts) says it differs; the rest come from that row.
 */
export const STAGE_ORDER = [
  'tracer',
  'securityHeaders',
  'errors',
  'headerNormalizer',
  'transport',
  'idempotency',
  'bodyValidation',
  'credential',
  'scopes',
  'pathAndQuery',
  'readAhead',
  'caller',
  'limiter',
  'early',
] as const;

export type StageName = (typeof STAGE_ORDER)[number];

/** A door's substitutions: a stage given here replaces the door table's default, `null` leaves it out. */
export type Substitutions<I extends LoggingInternal> = Partial<Record<StageName, Stage<I> | ReadonlyArray<Stage<I>> | null>>;

/** The stages every door has, as the door table makes them (a door with a caller adds callerStages). */
function frameStages<I extends LoggingInternal>(door: Door): Record<StageName, Stage<I> | null> {
  const spec = DOORS[door];
  return {
    tracer: captureLambdaHandler(tracer, { captureResponse: false }) as unknown as Stage<I>,
    // before errorsAndLogging, so its onError also dresses error responses
    securityHeaders: spec.securityHeaders ? (httpSecurityHeaders() as Stage<I>) : null,
    errors: errorsAndLogging<I>(),
    headerNormalizer: spec.normalizeHeaders ? (httpHeaderNormalizer() as Stage<I>) : null,
    transport: transport({ withBody: false }) as unknown as Stage<I>,
    idempotency: null,
    bodyValidation: null,
    credential: null,
    scopes: null,
    pathAndQuery: null,
    readAhead: null,
    caller: null,
    limiter: null,
    early: null,
  };
}

/**
 * The stages of a door whose request is some caller's (its credential `gateway-jwt`, `function-jwt` or
 * `push-secret`), as the door table makes them: the body read; for a proved token (by the gateway's authorizer,
 * or by the door's own check before it, which puts the claims where the authorizer puts them) the tenant and user
 * from the claims and the row's scope; path and query, no read ahead, the caller's read, the limiter charged per
 * request. Such a door's builder spreads these under its substitutions; a public door's never loads them (nor
 * its bundle the caller's read).
 */
export function callerStages<I extends LoggingInternal>(door: Door): Substitutions<I> {
  const spec = DOORS[door];
  const provedByToken = spec.credential === 'gateway-jwt' || spec.credential === 'function-jwt';
  const as = (mw: MiddlewareObj<ApiEvent, ApiResult, Error, Context, never>) => mw as unknown as Stage<I>;
  return {
    transport: as(transport({ withBody: true })),
    credential: provedByToken ? as(tenantFromClaims()) : null,
    scopes: provedByToken ? as(scopeCheck()) : null,
    pathAndQuery: as(pathAndQuery()),
    readAhead: as(readAhead(undefined)),
    caller: as(caller()),
    limiter: spec.limiter === 'per-request' ? as(rateLimit(rateLimiter)) : null,
  };
}

/** The door's stages with its substitutions, in STAGE_ORDER; a credential or limiter stage the door table calls for but nothing provides is a wiring mistake. */
export function doorStages<I extends LoggingInternal>(door: Door, substitutions: Substitutions<I>): Array<Stage<I>> {
  const base = frameStages<I>(door);
  const spec = DOORS[door];
  const out: Array<Stage<I>> = [];
  for (const name of STAGE_ORDER) {
    const given = Object.hasOwn(substitutions, name) ? substitutions[name] : base[name];
    if (name === 'credential' && !given && spec.credential !== 'none' && spec.credential !== 'client-secret')
      throw new Error(`The ${door} door proves its credential (${spec.credential}) in a stage of its own: none given`);
    if (name === 'limiter' && !given && (spec.limiter === 'per-request' || spec.limiter === 'per-tool-call'))
      throw new Error(`The ${door} door charges the limiter ${spec.limiter}: no limiter stage given`);
    if (given) out.push(...(Array.isArray(given) ? (given as ReadonlyArray<Stage<I>>) : [given as Stage<I>]));
  }
  return out;
}

/** The answer in the door's dialect (shared/http/doors.ts): SCIM's and OAuth's here; JSON-RPC's are the MCP server's own. */
const DIALECTS: Record<(typeof DOORS)[Door]['dialect'], (res: ApiResult) => ApiResult> = {
  rest: (res) => res,
  jsonrpc: (res) => res,
  scim: toScimAnswer,
  oauth: toOAuthAnswer,
};

// middy's handler takes (event, context) and makes each request's abort signal itself; its type still asks for
// options, so one never-aborted set serves every call instead of an AbortController per request
const MIDDY_CALL_OPTIONS = { signal: new AbortController().signal };

/** The handler's context: request.internal put on it by the last stage (middy's way to hand it to the handler). */
export type DoorContext<I> = Context & { internal: I };

/**
 * The one chain builder every door's handler is made by (docs/architecture.md, "Doors"): the stages of
 * STAGE_ORDER as the door table and the door's substitutions make them, request.internal onto the context, then
 * `handle`; every answer, refusals included, in the door's dialect, each request's database metrics kept apart.
 */
export function doorPipeline<I extends LoggingInternal>(
  door: Door,
  substitutions: Substitutions<I>,
  handle: (event: ApiEvent, context: DoorContext<I>) => Promise<ApiResult>,
): (event: ApiEvent, context: Context) => Promise<ApiResult> {
  let chain = middy<ApiEvent, ApiResult, Error, Context, I>();
  for (const stage of doorStages<I>(door, substitutions)) chain = chain.use(stage);
  const handler = chain
    .use({ name: 'internalToContext', before: (request) => void ((request.context as DoorContext<I>).internal = request.internal) })
    .handler((event, context) => handle(event, context as DoorContext<I>));
  const dialect = DIALECTS[DOORS[door].dialect];
  return (event: ApiEvent, context: Context): Promise<ApiResult> =>
    withDbMetrics(newDbMetrics(), async () => dialect((await handler(event, context, MIDDY_CALL_OPTIONS)) as ApiResult));
}
