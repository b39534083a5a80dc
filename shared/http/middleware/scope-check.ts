import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { InsufficientScopeError, requiredScope, scopesOfClaim } from '#shared/auth/scopes.ts';
import type { ApiEvent, ApiInternal, ApiResult } from '#shared/http/middleware/internal.ts';

/**
 * 403 `insufficient_scope` (RFC 6750) unless the token's `scope` claim holds the route's scope (contract section
 * 17). Deployed, API Gateway's JWT authorizer checked the same before the function ran; locally this is the only
 * check of the claim. It comes before the caller's read: a token refused here costs no read and no budget, as at
 * the gateway. It sees the token only: a service account's token is checked again where its caller is admitted
 * (the `caller` middleware, shared/auth/load-caller.ts), against the scopes the account holds now (contract 19).
 */
export const scopeCheck = (): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> => ({
  name: 'scopeCheck',
  before: (request) => {
    const needed = requiredScope();
    const claims = request.event.requestContext?.authorizer?.jwt?.claims ?? {};
    if (!scopesOfClaim(claims.scope).has(needed)) throw new InsufficientScopeError(needed);
  },
});
