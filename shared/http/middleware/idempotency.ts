import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { AppError } from '#shared/errors.ts';
import { idempotencyKeyOf, runIdempotent } from '#shared/http/idempotency.ts';
import { errorResponse } from '#shared/http/middleware/errors-and-logging.ts';
import type { ApiEvent, ApiInternal, ApiResult, ReplayRequest } from '#shared/http/middleware/internal.ts';

/** The caller refused (401, 429) inside the idempotent section: no answer to keep, so the record is dropped. */
class CallerRefused extends Error {
  constructor(readonly refusal: unknown) {
    super('caller refused');
  }
}

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
      // The record is put beside the caller's read (its tenant and user are the token's, known already), not after
      // it: one round trip less. The caller's refusal (401, 429) still answers first and is never kept.
      const admitted = internal.ctx;
      admitted.catch(() => undefined); // awaited below, whatever the record says
      // Answers below 500 are stored for replay, so typed errors become responses inside the idempotent section.
      const runToResponse = async () => {
        const ctx = await admitted.catch((err: unknown) => Promise.reject(new CallerRefused(err)));
        return run().catch((err: unknown) =>
          err instanceof AppError ? errorResponse(err, internal.requestId, ctx.log) : Promise.reject(err),
        );
      };
      // A replayed success is the body the first request validated (same request hash), so it validates again.
      const authorizeReplay = async () =>
        void (await opts.authorizeReplay?.({ ctx: await admitted, params: internal.params, body: await internal.body(), event }));
      try {
        const result = await runIdempotent(
          {
            db: internal.data.db,
            tenantId: internal.data.tenantId,
            userId: internal.userId,
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
        await admitted;
        return result;
      } catch (err) {
        await admitted; // the caller's 401 or 429 before the key's 409 or 422
        throw err instanceof CallerRefused ? err.refusal : err;
      }
    };
  },
});
