import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { AppError } from '#shared/errors.ts';
import { idempotencyKeyOf, runIdempotent } from '#shared/http/idempotency.ts';
import { errorResponse } from '#shared/http/middleware/errors-and-logging.ts';
import type { ApiEvent, ApiInternal, ApiResult, ReplayRequest } from '#shared/http/middleware/internal.ts';

/**
 * Reads a POST's Idempotency-Key (400 when malformed, before the token is looked at) and puts in request.internal
 * how the handler runs (`respond`): without a key, just once; with one, through runIdempotent
 * (shared/http/idempotency.ts): the first answer below 500 kept and replayed, typed errors becoming responses
 * inside the idempotent section so that they are kept too. `sealed`: the answer holds a secret, so the copy kept
 * is sealed. `authorizeReplay` runs for the caller as it is now, with the validated body, before a stored
 * success is returned.
 */
export const idempotency = (opts: {
  sealed?: boolean;
  authorizeReplay?: (req: ReplayRequest<unknown>) => Promise<unknown> | void;
}): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> => ({
  name: 'idempotency',
  before: (request) => {
    const { event, context, internal } = request;
    const key = event.requestContext.http.method === 'POST' ? idempotencyKeyOf(event.headers) : undefined;
    internal.respond = async (run) => {
      if (!key) return run();
      const ctx = await internal.ctx;
      // Answers below 500 are stored for replay, so typed errors become responses inside the idempotent section.
      const runToResponse = () =>
        run().catch((err: unknown) => (err instanceof AppError ? errorResponse(err, internal.requestId, ctx.log) : Promise.reject(err)));
      // A replayed success is the body the first request validated (same request hash), so it validates again.
      const authorizeReplay = async () =>
        void (await opts.authorizeReplay?.({ ctx, params: internal.params, body: await internal.body(), event }));
      return runIdempotent(
        {
          db: internal.data.db,
          tenantId: ctx.caller.tenantId,
          userId: ctx.caller.userId,
          route: event.routeKey,
          params: internal.params,
          key,
          body: internal.read ?? { kind: 'none' },
          context,
          sealed: opts.sealed,
          authorizeReplay,
        },
        runToResponse,
      );
    };
  },
});
