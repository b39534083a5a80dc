import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { callerTeamUuids } from '#shared/auth/load-caller.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import type { ApiEvent, ApiInternal, ApiResult, RequestCtx } from '#shared/http/middleware/internal.ts';
import type { RateLimiter } from '#shared/http/rate-limit.ts';
import { withKeys } from '#shared/logger.ts';

/** The caller, once read, charged to its tenant's and its own budget (429), and the request context for it. */
async function admit(internal: ApiInternal, limiter: Pick<RateLimiter, 'take'>): Promise<RequestCtx> {
  // Who is calling (401) comes before any budget is taken: a refused token or user costs the tenant nothing.
  const { caller, teams: teamsAhead } = await internal.caller;
  const limitHeaders = await limiter.take(caller.tenantId, caller.userId);
  if (limitHeaders) internal.responseHeaders = limitHeaders;
  const { data, loader, requestId } = internal;
  const log = withKeys({ request_id: requestId, tenant_uuid: caller.tenantId, user_uuid: caller.userId });
  let teams: Promise<Set<string>> | undefined = teamsAhead;
  const ctx: RequestCtx = { ...data, caller, requestId, log, loader, teams: () => (teams ??= callerTeamUuids(data, caller.userId)) };
  if (!caller.service) loader.prime(userEntity, caller.user); // a service account's stand-in is no user to find
  return ctx;
}

/**
 * Puts the admitted caller's request context in request.internal as a promise (`ctx`): it resolves once the
 * caller is read and `limiter` (contract section 11) grants a token, its RateLimit headers kept for the response
 * (`responseHeaders`); it rejects with the caller's 401 or the limiter's 429. Not awaited here: the route's early
 * start gets it (shared/http/middleware/early-lists.ts), and the handler awaits it before anything else.
 */
export const rateLimit = (limiter: Pick<RateLimiter, 'take'>): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> => ({
  name: 'rateLimit',
  before: (request) => {
    request.internal.ctx = admit(request.internal, limiter);
    request.internal.ctx.catch(() => undefined); // a refused request drops the early work with it
  },
});
