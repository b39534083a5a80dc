import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type * as z from 'zod';
import type { Caller } from '#shared/auth/caller.ts';
import type { Db } from '#shared/db/client.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import type { EntityRef } from '#shared/db/reads.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import type { ReadBody } from '#shared/http/transport.ts';
import type { Loader } from '#shared/list/entity-cache.ts';
import type { Log } from '#shared/logger.ts';

export type ApiEvent = APIGatewayProxyEventV2WithJWTAuthorizer;
export type ApiResult = APIGatewayProxyStructuredResultV2;

/** Everything a request handler gets: the caller, a tenant-confined data context, per-request caches. */
export type RequestCtx = DomainCtx;

/** What errorsAndLogging keeps for the request (public routes too), and the headers a request earns on the way. */
export interface LoggingInternal extends Record<string, unknown> {
  requestId: string;
  log: Log;
  /** The rate limiter's headers, added to whatever response the request ends with. */
  responseHeaders?: Record<string, string>;
}

/**
 * What apiHandler's middlewares put in middy's `request.internal`, each under its own name, in the order they
 * run (shared/http/api.ts). Async prerequisites are promises, started as early as they can be and awaited by
 * whoever needs them: so the caller's read, the route's early start and the body schema's import overlap.
 */
export interface ApiInternal extends LoggingInternal {
  /** transport: the body as read (absent: none). */
  read?: ReadBody;
  /** idempotency: runs the handler once per Idempotency-Key (a POST without one: just runs it). */
  respond: (run: () => Promise<ApiResult>) => Promise<ApiResult>;
  /** bodyValidation: the validated body (400/422), checked on first call; undefined for a route without a schema. */
  body: () => Promise<unknown>;
  /** tenantFromClaims: the token's tenant (a data context confined to it) and user, and the request's loader. */
  data: DataCtx & { db: Db };
  userId: string;
  loader: Loader;
  /** pathAndQuery: path parameters (uuids lower-cased) and query pairs. */
  params: Record<string, string>;
  query: Array<[string, string]>;
  /** readAhead: what the caller's read fetches besides the user. */
  readAhead: { entities: EntityRef[]; teams: boolean };
  /** caller: the token's user, once read (401 when unknown or inactive), and the caller's teams when read ahead. */
  caller: Promise<{ caller: Caller; teams?: Promise<Set<string>> }>;
  /** rateLimit: the same context once the caller is admitted by the limiter (401, 429). */
  ctx: Promise<RequestCtx>;
  /** earlyLists: what the route's `early` start resolves to (undefined without one). */
  early: Promise<unknown>;
}

/**
 * What a route reads first, declared from its path parameters: entities fetched in the same BatchGetItem as
 * the caller's user, and (`teams`) the caller's teams queried alongside. A get then costs one round trip.
 */
export type ReadAhead = (params: Record<string, string>) => { entities?: EntityRef[]; teams?: boolean };

/**
 * What a route may start before its caller is known (`early`: a list's plan and first keys, a check-in's goal), concurrently with
 * the caller's read: reads of the token's tenant, through the request's own loader. `ctx` resolves once the
 * caller is known and admitted by the limiter; a 401 or 429 rejects it, the early work stops at its next await
 * of it and its result is dropped. So nothing is answered, and no caller-specific decision made, before the
 * caller is known; what an early start may read before that is bounded by the route (docs/architecture.md).
 */
export interface EarlyRequest {
  data: DataCtx;
  loader: Loader;
  /** The validated body (400/422 rejects it), as `handle` gets it: a write may start its first read from it. */
  body: () => Promise<unknown>;
  params: Record<string, string>;
  query: Array<[string, string]>;
  event: ApiEvent;
  ctx: Promise<RequestCtx>;
}

/** What a route's replay gate gets: the caller as it is now, the path parameters and the validated body. */
export interface ReplayRequest<B> {
  ctx: RequestCtx;
  params: Record<string, string>;
  body: B;
  event: ApiEvent;
}

/**
 * A route's body schema, imported on the first request that has a body to check, not at cold start (zod and
 * building the schema added 30-70 % of the floor's init CPU to a body route; docs/benchmarks.md, "Cold start"):
 * `body: () => import('#shared/schemas/bodies/goal-create.ts').then((m) => m.GoalCreateBody)`. Each route body
 * has its own module under shared/schemas/bodies/, so that first request builds that schema only.
 */
export type BodySchema<S extends z.ZodType> = () => Promise<S>;
