import type * as z from 'zod';
import { config } from '#shared/config.ts';
import { bodyValidation } from '#shared/http/middleware/body-validation.ts';
import { earlyLists } from '#shared/http/middleware/early-lists.ts';
import { requestIdOf } from '#shared/http/middleware/errors-and-logging.ts';
import { idempotency } from '#shared/http/middleware/idempotency.ts';
import type {
  ApiEvent,
  ApiInternal,
  ApiResult,
  BodySchema,
  EarlyRequest,
  LoggingInternal,
  ReadAhead,
  ReplayRequest,
  RequestCtx,
} from '#shared/http/middleware/internal.ts';
import { readAhead } from '#shared/http/middleware/read-ahead.ts';
import { callerStages, doorPipeline, type Stage } from '#shared/http/pipeline.ts';
import { transport } from '#shared/http/transport.ts';
import { queryPairs } from '#shared/list/params.ts';
import { withKeys, type Log } from '#shared/logger.ts';

export type { ApiEvent, ApiResult, BodySchema, EarlyRequest, ReadAhead, ReplayRequest, RequestCtx };
export { json } from '#shared/http/json.ts';
export { validateBody } from '#shared/http/middleware/body-validation.ts';
export { rateLimiter } from '#shared/http/pipeline.ts';

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

/**
 * An authenticated API handler: resolves the caller from the JWT claims (401 if the user is unknown or
 * inactive), validates the body with `body` (a route without one refuses body fields), and runs `handle`.
 * Handlers stay thin: parse, call a domain function in shared/, shape the response. `accepts`: the media types of
 * a body the route takes, its row's `accepts` (default JSON only; shared/http/transport.ts). `sealReplays`: the
 * answer holds a secret, so the copy kept for Idempotency-Key replays is sealed (shared/http/idempotency.ts).
 * `authorizeReplay` (every POST route declares one; test/unit/replay-gates.test.ts): the route's permission checks,
 * the same domain checks its handler runs first, run for the caller as it is now before a stored answer is
 * replayed; it throws the refusal (403, or 404/422 for a record the caller can no longer see) the request would get.
 *
 * The work before `handle` is a chain of middy middlewares under shared/http/middleware/, in this order; each puts
 * what it learns in request.internal, async prerequisites as promises: sizes and body read (413/431/415/400),
 * Idempotency-Key (400), the body schema's import started, the token's tenant (401), the route's scope (403
 * insufficient_scope), path and query, the read
 * ahead, the caller's read started (its 401 comes from the promise), the admission by the limiter (429) as a
 * promise, the route's early start beside the caller's read. The handler then awaits the admitted caller (so a
 * 401 or 429 wins over a body's 400 found meanwhile), validates the body and runs `handle`, once per
 * Idempotency-Key. `door`: `scim` for the SCIM routes (shared/scim/handler.ts), whose answers are SCIM's.
 */
export function apiHandler<S extends z.ZodType = z.ZodUndefined, E = undefined>(
  opts: {
    accepts?: readonly string[];
    body?: BodySchema<S>;
    sealReplays?: boolean;
    readAhead?: ReadAhead;
    early?: (req: EarlyRequest) => Promise<E>;
    handle: (req: ApiRequest<z.infer<S>, E>) => Promise<ApiResult>;
    authorizeReplay?: (req: ReplayRequest<z.infer<S>>) => Promise<unknown> | void;
  },
  door: 'rest' | 'scim' = 'rest',
) {
  void config.tableName; // every authenticated route reads the caller's user: without a table, fail at cold start
  return doorPipeline<ApiInternal>(
    door,
    {
      ...callerStages<ApiInternal>(door),
      transport: transport({ withBody: true, accepts: opts.accepts }) as Stage<ApiInternal>,
      idempotency: idempotency({
        sealed: opts.sealReplays,
        authorizeReplay: opts.authorizeReplay as (req: ReplayRequest<unknown>) => Promise<unknown> | void,
      }),
      bodyValidation: bodyValidation(opts.body),
      readAhead: readAhead(opts.readAhead),
      early: earlyLists(opts.early),
    },
    async (event, { internal }) => {
      // the admitted caller is awaited inside the run: a key's record is put beside the caller's read (idempotency.ts)
      const run = async () => {
        const ctx = await internal.ctx;
        const body = (await internal.body()) as z.infer<S>;
        const rawBody = internal.read?.kind === 'raw' ? { mediaType: internal.read.mediaType, text: internal.read.text } : undefined;
        return opts.handle({
          ctx,
          early: internal.early as Promise<E>,
          body,
          params: internal.params,
          query: internal.query,
          event,
          ...(rawBody ? { rawBody } : {}),
        });
      };
      return internal.respond(run);
    },
  );
}

/** A handler for public routes (OpenAPI document, JWKS): no caller, same errors and logging. */
export function publicHandler(handle: (req: PublicRequest) => Promise<ApiResult>, door: 'public' | 'token' = 'public') {
  return doorPipeline<LoggingInternal>(door, {}, async (event, context) => {
    const requestId = requestIdOf(event, context);
    return handle({ requestId, log: withKeys({ request_id: requestId }), event, query: queryPairs(event.rawQueryString) });
  });
}

/**
 * The token endpoint's handler (door `token`): the public chain, the client secret proved by `handle`, which then
 * charges the limiter itself (after the secret, shared/http/doors.ts), every answer in OAuth's dialect.
 */
export const tokenHandler = (handle: (req: PublicRequest) => Promise<ApiResult>) => publicHandler(handle, 'token');
