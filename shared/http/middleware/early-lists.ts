import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import type { ApiEvent, ApiInternal, ApiResult, EarlyRequest } from '#shared/http/middleware/internal.ts';

/**
 * Starts the route's `early` work (a list's plan and first keys) beside the caller's read, and puts its promise
 * in request.internal (`early`; undefined without one). It gets the admitted caller as the `ctx` promise
 * (shared/http/middleware/rate-limit.ts): a 401 or 429 rejects it, and the early work's result is dropped.
 */
export const earlyLists = (
  early: ((req: EarlyRequest) => Promise<unknown>) | undefined,
): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> => ({
  name: 'earlyLists',
  before: (request) => {
    const { data, loader, params, query, ctx, body } = request.internal;
    const started = early?.({ data, loader, body, params, query, event: request.event, ctx }) ?? Promise.resolve(undefined);
    started.catch(() => undefined); // awaited by the handler once the caller is admitted
    request.internal.early = started;
  },
});
