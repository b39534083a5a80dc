import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { issuedAtOfClaim, PRINCIPAL_TYPE_CLAIM, requiredScope, SERVICE_ACCOUNT_PRINCIPAL, scopesOfClaim } from '#shared/auth/scopes.ts';
import { loadCaller } from '#shared/auth/load-caller.ts';
import type { ApiEvent, ApiInternal, ApiResult } from '#shared/http/middleware/internal.ts';

/**
 * Starts reading the token's user (or service account), with what the route reads ahead, and puts the read in request.internal as a
 * promise (`caller`; 401 when the user is unknown or inactive): not awaited here, so the route's early start
 * runs beside the read. A service account's token is admitted only as the account is now (load-caller.ts): its
 * `scope` claim narrowed to the account's scopes must still hold the route's (403 insufficient_scope), its `iat`
 * must not precede the account's last rotation (401); both refused before the limiter charges anything.
 */
export const caller = (): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> => ({
  name: 'caller',
  before: (request) => {
    const { data, userId, readAhead } = request.internal;
    const claims = request.event.requestContext?.authorizer?.jwt?.claims ?? {};
    const read = { readAhead: readAhead.entities, teams: readAhead.teams };
    // a service account's token names the account as its user (shared/auth/issuer.ts): the account is read instead
    request.internal.caller =
      claims[PRINCIPAL_TYPE_CLAIM] === SERVICE_ACCOUNT_PRINCIPAL
        ? loadCaller(data, userId, {
            ...read,
            service: { scopes: scopesOfClaim(claims.scope), issuedAt: issuedAtOfClaim(claims.iat), needs: requiredScope() },
          })
        : loadCaller(data, userId, { ...read, service: false });
    request.internal.caller.catch(() => undefined); // awaited by rateLimit
  },
});
