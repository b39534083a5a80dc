import middy, { type MiddlewareObj } from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpSecurityHeaders from '@middy/http-security-headers';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type * as z from 'zod';
import { callerTeamUuids, loadCaller } from '#shared/auth/load-caller.ts';
import { config } from '#shared/config.ts';
import { currentDbMetrics, newDbMetrics, withDbMetrics } from '#shared/db/metrics.ts';
import type { Db } from '#shared/db/client.ts';
import type { DataCtx } from '#shared/db/model.ts';
import type { EntityRef } from '#shared/db/reads.ts';
import { tenantDb } from '#shared/db/tenant-scope.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { UUID_RE } from '#shared/ids.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { AppError, BadRequestError, UnauthorizedError, ValidationError, type ErrorDetail } from '#shared/errors.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { idempotencyKeyOf, runIdempotent } from '#shared/http/idempotency.ts';
import { limitDefaultsFromEnv, RateLimiter } from '#shared/http/rate-limit.ts';
import { readBodyOf, transport } from '#shared/http/transport.ts';
import { queryPairs } from '#shared/list/params.ts';
import { logger, withKeys, type Log } from '#shared/logger.ts';
import { captureLambdaHandler, tracer } from '#shared/tracer.ts';

export type ApiEvent = APIGatewayProxyEventV2WithJWTAuthorizer;
export type ApiResult = APIGatewayProxyStructuredResultV2;

/** Everything a request handler gets: the caller, a tenant-confined data context, per-request caches. */
export type RequestCtx = DomainCtx;

export interface ApiRequest<B, E = undefined> {
  ctx: RequestCtx;
  /** What the route's `early` start resolved to (undefined without one). */
  early: Promise<E>;
  body: B;
  params: Record<string, string>;
  /** Query string pairs, repeated keys kept apart. */
  query: Array<[string, string]>;
  event: ApiEvent;
  /** A body of another media type the route row `accepts` (e.g. text/csv), as text; `body` is then undefined. */
  rawBody?: { mediaType: string; text: string };
}

export interface PublicRequest {
  requestId: string;
  log: Log;
  event: ApiEvent;
  query: Array<[string, string]>;
}

export const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): ApiResult => ({
  statusCode,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

interface Internal extends Record<string, unknown> {
  requestId: string;
  log: Log;
}

/** API Gateway's request id (also its `apigw-requestid` header); the Lambda's own id when an event has none. */
const requestIdOf = (event: ApiEvent, context: Context) => event.requestContext?.requestId ?? context.awsRequestId;

/** Headers a request earns on the way (the rate limiter's), added to whatever response it ends with. */
const extraHeaders = new WeakMap<object, Record<string, string>>();

/**
 * The error mapping: the one place typed errors become HTTP responses (contract section 1); only <500
 * messages reach the client.
 */
function errorResponse(err: unknown, requestId: string, log: Log): ApiResult {
  if (err instanceof AppError) {
    log.info('request refused', { status: err.status, code: err.code, error_message: err.message, details: err.details, db: currentDbMetrics() }); // `message` is Powertools' own key
    return json(err.status, { error: { status: err.status, code: err.code, message: err.message, details: err.details, request_id: requestId } }, { ...err.headers, 'x-request-id': requestId, ...dbMetricHeaders() });
  }
  log.error('request failed', err as Error);
  return json(500, { error: { status: 500, code: 'internal', message: 'Internal server error', details: [], request_id: requestId } }, { 'x-request-id': requestId });
}

/**
 * Request id, structured request logging and the error mapping (errorResponse). Its onError sees every
 * failure of the middlewares registered after it and of the handler.
 */
const errorsAndLogging = (): MiddlewareObj<ApiEvent, ApiResult, Error, Context, Internal> => ({
  name: 'errorsAndLogging',
  before: (request) => {
    const requestId = requestIdOf(request.event, request.context);
    request.internal.requestId = requestId;
    request.internal.log = withKeys({ request_id: requestId, route: request.event.routeKey });
  },
  after: (request) => {
    const res = request.response;
    if (res) res.headers = { ...res.headers, ...extraHeaders.get(request.event), 'x-request-id': request.internal.requestId, ...dbMetricHeaders() };
    request.internal.log.info('request', { status: res?.statusCode, db: currentDbMetrics() });
  },
  onError: (request) => {
    const requestId = request.internal.requestId ?? requestIdOf(request.event, request.context);
    const log = request.internal.log ?? logger;
    const res = errorResponse(request.error, requestId, log);
    res.headers = { ...extraHeaders.get(request.event), ...res.headers };
    request.response = res;
  },
});

/**
 * The local stack (EXPOSE_DB_METRICS=true) reports each request's DynamoDB round trips, consumed capacity and
 * items read in response headers, so tests and `npm run bench` can assert data-access costs over HTTP.
 */
function dbMetricHeaders(): Record<string, string> {
  const m = process.env.EXPOSE_DB_METRICS === 'true' ? currentDbMetrics() : undefined;
  if (!m) return {};
  return { 'x-db-round-trips': String(m.roundTrips), 'x-db-calls': String(m.calls), 'x-db-writes': String(m.writes), 'x-db-read-units': String(m.readCapacity), 'x-db-write-units': String(m.writeCapacity), 'x-db-items-read': String(m.itemsRead) };
}

/** The token's tenant and user (401 unless both are uuids), and a data context confined to that tenant. */
async function tokenTenant(event: ApiEvent): Promise<{ data: DataCtx & { db: Db }; userId: string }> {
  const claims = event.requestContext?.authorizer?.jwt?.claims ?? {};
  const tenantId = claims[config.tenantClaim];
  const userId = claims[config.userClaim];
  // Only uuids: a claim is built into key prefixes and the tenant's LeadingKeys policy (`T#<tenant>#*`), where
  // `*` or `?` from an external issuer's token would widen the pattern to other tenants.
  if (typeof tenantId !== 'string' || typeof userId !== 'string' || !UUID_RE.test(tenantId) || !UUID_RE.test(userId)) throw new UnauthorizedError('Token does not name a tenant and a user');
  const tenant = tenantId.toLowerCase();
  return { data: { tenantId: tenant, db: await tenantDb(tenant) }, userId: userId.toLowerCase() };
}

function resolveCaller(params: Record<string, string>, data: DataCtx & { db: Db }, userId: string, readAhead: ReadAhead | undefined) {
  const declared = readAhead?.(params);
  // keys hold uuids lower-cased; a path id that is no uuid names no entity, so it is not read ahead
  const entities = (declared?.entities ?? []).filter((e) => UUID_RE.test(e.id));
  return loadCaller(data, userId, { readAhead: entities, teams: declared?.teams === true });
}

/**
 * What a route reads first, declared from its path parameters: entities fetched in the same BatchGetItem as
 * the caller's user, and (`teams`) the caller's teams queried alongside. A get then costs one round trip.
 */
export type ReadAhead = (params: Record<string, string>) => { entities?: EntityRef[]; teams?: boolean };

/**
 * What a route may start before its caller is known (`early`: a list's plan and first keys), concurrently with
 * the caller's read: reads of the token's tenant, through the request's own loader. `ctx` resolves once the
 * caller is known and admitted by the limiter; a 401 or 429 rejects it, the early work stops at its next await
 * of it and its result is dropped. So nothing is answered, and no caller-specific decision made, before the
 * caller is known; what an early start may read before that is bounded by the route (docs/architecture.md).
 */
export interface EarlyRequest {
  data: DataCtx;
  loader: Loader;
  params: Record<string, string>;
  query: Array<[string, string]>;
  event: ApiEvent;
  ctx: Promise<RequestCtx>;
}

/** The per-tenant and per-user limiter (contract section 11), one per container, its budget in the table. */
export const rateLimiter = new RateLimiter({ db: tenantDb, tableName: () => config.tableName, defaults: limitDefaultsFromEnv });

const valueAt = (root: unknown, path: PropertyKey[]) => path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), root);

function zodDetails(error: z.ZodError, input: unknown): { badRequest: boolean; details: ErrorDetail[] } {
  let badRequest = false;
  const details: ErrorDetail[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      badRequest = true;
      for (const key of issue.keys) details.push({ field: path ? `${path}.${key}` : key, code: 'unknown_field', message: `unknown field ${key}` });
      continue;
    }
    // A wrong JSON type is a malformed request (400); a well-typed value that breaks a rule is 422.
    // An enum given a value of another JSON type (a number for a string enum) is a wrong type too.
    const wrongType =
      issue.code === 'invalid_type' ||
      issue.code === 'invalid_union' ||
      (issue.code === 'invalid_value' && issue.values.length > 0 && typeof valueAt(input, issue.path) !== typeof issue.values[0]);
    if (wrongType) badRequest = true;
    // a schema's own rule may name its code (`params.code`, e.g. required), else zod's issue code
    const ruleCode = issue.code === 'custom' && typeof issue.params?.code === 'string' ? issue.params.code : issue.code;
    details.push({ field: path || undefined, code: wrongType ? 'invalid_type' : ruleCode, message: issue.message });
  }
  return { badRequest, details };
}

/** Validates a parsed body (an absent body is `{}`): 400 for wrong types or unknown fields; 422 for rule violations. */
export function validateBody<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const { badRequest, details } = zodDetails(result.error, value);
  const message = details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).join('; ');
  throw badRequest ? new BadRequestError(message, details) : new ValidationError(message, details);
}

/** Path parameters; a uuid is the same uuid in any case, and records store it lower-cased. */
function pathParams(event: ApiEvent): Record<string, string> {
  return Object.fromEntries(Object.entries(event.pathParameters ?? {}).map(([k, v]) => [k, v && UUID_RE.test(v) ? v.toLowerCase() : (v ?? '')]));
}

// middy's handler takes (event, context) and makes each request's abort signal itself; its type still asks for
// options, so one never-aborted set serves every call instead of an AbortController per request
const MIDDY_CALL_OPTIONS = { signal: new AbortController().signal };

function wrap(handler: middy.MiddyfiedHandler<ApiEvent, ApiResult, Error, Context, Internal>) {
  return (event: ApiEvent, context: Context): Promise<ApiResult> => withDbMetrics(newDbMetrics(), async () => (await handler(event, context, MIDDY_CALL_OPTIONS)) as ApiResult);
}

/**
 * A route's body schema, imported on the first request that has a body to check, not at cold start (zod and
 * building the schema added 30-70 % of the floor's init CPU to a body route; docs/benchmarks.md, "Cold start"):
 * `body: () => import('#shared/schemas/bodies/goal-create.ts').then((m) => m.GoalCreateBody)`. Each route body
 * has its own module under shared/schemas/bodies/, so that first request builds that schema only.
 */
export type BodySchema<S extends z.ZodType> = () => Promise<S>;

// NO_BODY (shared/http/no-body.ts) and with it zod are imported only when a body arrives: a route without a body
// schema (most GETs) then loads no zod at all.
const NO_BODY: BodySchema<z.ZodType> = () => import('#shared/http/no-body.ts').then((m) => m.NO_BODY);

/**
 * An authenticated API handler: resolves the caller from the JWT claims (401 if the user is unknown or
 * inactive), validates the body with `body` (a route without one refuses body fields), and runs `handle`.
 * Handlers stay thin: parse, call a domain function in shared/, shape the response. `sealReplays`: the answer
 * holds a secret, so the copy kept for Idempotency-Key replays is sealed (shared/http/idempotency.ts).
 * `authorizeReplay` (every POST route declares one; test/unit/replay-gates.test.ts): the route's permission checks,
 * the same domain checks its handler runs first, run for the caller as it is now before a stored answer is
 * replayed; it throws the refusal (403, or 404/422 for a record the caller can no longer see) the request would get.
 */
export function apiHandler<S extends z.ZodType = z.ZodUndefined, E = undefined>(opts: {
  body?: BodySchema<S>;
  sealReplays?: boolean;
  readAhead?: ReadAhead;
  early?: (req: EarlyRequest) => Promise<E>;
  handle: (req: ApiRequest<z.infer<S>, E>) => Promise<ApiResult>;
  authorizeReplay?: (req: ReplayRequest<z.infer<S>>) => Promise<unknown> | void;
}) {
  void config.tableName; // every authenticated route reads the caller's user: without a table, fail at cold start
  let schema: Promise<z.ZodType> | undefined;
  const bodySchema = () => (schema ??= (opts.body ?? NO_BODY)());
  const handler = middy<ApiEvent, ApiResult, Error, Context, Internal>()
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(httpSecurityHeaders()) // before errorsAndLogging, so its onError also dresses error responses
    .use(errorsAndLogging())
    .use(httpHeaderNormalizer())
    .use(transport({ withBody: true }) as MiddlewareObj<ApiEvent, ApiResult, Error, Context, Internal>)
    .handler(async (event, context) => {
      const idempotencyKey = event.requestContext.http.method === 'POST' ? idempotencyKeyOf(event.headers) : undefined;
      const read = readBodyOf(event);
      // What the body is checked against: the route's schema (an absent body is `{}` to it), or NO_BODY for a JSON
      // body sent to a route without one. It starts loading now, while the caller is read; the check itself
      // comes after the caller's (401) and the budget's (429), as before.
      const checking = read.kind === 'json' || (read.kind === 'none' && opts.body) ? bodySchema() : undefined;
      checking?.catch(() => undefined); // awaited in run(); a request refused first must not leave it unhandled
      const { data, userId } = await tokenTenant(event);
      const params = pathParams(event);
      const query = queryPairs(event.rawQueryString);
      const loader = new Loader(data);
      let admit!: (ctx: RequestCtx) => void;
      let refuse!: (err: unknown) => void;
      const admitted = new Promise<RequestCtx>((resolve, reject) => ((admit = resolve), (refuse = reject)));
      admitted.catch(() => undefined); // a refused request drops the early work with it
      const early = opts.early?.({ data, loader, params, query, event, ctx: admitted }) ?? Promise.resolve(undefined as E);
      early.catch(() => undefined); // awaited by the handler once the caller is admitted
      let ctx: RequestCtx;
      let requestId: string;
      let log: Log;
      try {
        // Who is calling (401) comes before any budget is taken: a refused token or user costs the tenant nothing.
        const { caller, teams: teamsAhead } = await resolveCaller(params, data, userId, opts.readAhead);
        const limitHeaders = await rateLimiter.take(caller.tenantId, caller.userId);
        if (limitHeaders) extraHeaders.set(event, limitHeaders);
        requestId = requestIdOf(event, context);
        log = withKeys({ request_id: requestId, tenant_uuid: caller.tenantId, user_uuid: caller.userId });
        let teams: Promise<Set<string>> | undefined = teamsAhead;
        ctx = { ...data, caller, requestId, log, loader, teams: () => (teams ??= callerTeamUuids(data, caller.userId)) };
        ctx.loader.prime(userEntity, caller.user);
        admit(ctx);
      } catch (err) {
        refuse(err);
        throw err;
      }
      const parseBody = async () => {
        // No body for a route without a schema is `{}`, which NO_BODY accepts: nothing to check, nothing to load.
        const parsed = checking ? validateBody(await checking, read.kind === 'json' ? read.value : {}) : undefined;
        return (opts.body ? parsed : undefined) as z.infer<S>;
      };
      const run = async () => {
        const body = await parseBody();
        const rawBody = read.kind === 'raw' ? { mediaType: read.mediaType, text: read.text } : undefined;
        return opts.handle({ ctx, early, body, params, query, event, ...(rawBody ? { rawBody } : {}) });
      };
      if (!idempotencyKey) return run();
      // Answers below 500 are stored for replay, so typed errors become responses inside the idempotent section.
      const runToResponse = () => run().catch((err: unknown) => (err instanceof AppError ? errorResponse(err, requestId, log) : Promise.reject(err)));
      // A replayed success is the body the first request validated (same request hash), so it validates again.
      const authorizeReplay = async () => void (await opts.authorizeReplay?.({ ctx, params, body: await parseBody(), event }));
      return runIdempotent(
        { db: data.db, tenantId: ctx.caller.tenantId, userId: ctx.caller.userId, route: event.routeKey, params, key: idempotencyKey, body: read, context, sealed: opts.sealReplays, authorizeReplay },
        runToResponse,
      );
    });
  return wrap(handler);
}

/** What a route's replay gate gets: the caller as it is now, the path parameters and the validated body. */
export interface ReplayRequest<B> {
  ctx: RequestCtx;
  params: Record<string, string>;
  body: B;
  event: ApiEvent;
}

/** A handler for public routes (OpenAPI document, JWKS): no caller, same errors and logging. */
export function publicHandler(handle: (req: PublicRequest) => Promise<ApiResult>) {
  const handler = middy<ApiEvent, ApiResult, Error, Context, Internal>()
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(errorsAndLogging())
    .use(transport({ withBody: false }) as MiddlewareObj<ApiEvent, ApiResult, Error, Context, Internal>)
    .handler(async (event, context) => {
      const requestId = requestIdOf(event, context);
      return handle({ requestId, log: withKeys({ request_id: requestId }), event, query: queryPairs(event.rawQueryString) });
    });
  return wrap(handler);
}
