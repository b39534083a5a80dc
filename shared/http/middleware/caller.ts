import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { PRINCIPAL_TYPE_CLAIM, SERVICE_ACCOUNT_PRINCIPAL } from '#shared/auth/scopes.ts';
import { loadCaller } from '#shared/auth/load-caller.ts';
import type { ApiEvent, ApiInternal, ApiResult } from '#shared/http/middleware/internal.ts';

/**
 * Starts reading the token's user (or service account), with what the route reads ahead, and puts the read in request.internal as a
 * promise (`caller`; 401 when the user is unknown or inactive): not awaited here, so the route's early start
 * runs beside the read.
 */
export const caller = (): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> => ({
  name: 'caller',
  before: (request) => {
    const { data, userId, readAhead } = request.internal;
    // a service account's token names the account as its user (shared/auth/issuer.ts): the account is read instead
    const service = request.event.requestContext?.authorizer?.jwt?.claims?.[PRINCIPAL_TYPE_CLAIM] === SERVICE_ACCOUNT_PRINCIPAL;
    request.internal.caller = loadCaller(data, userId, { readAhead: readAhead.entities, teams: readAhead.teams, service });
    request.internal.caller.catch(() => undefined); // awaited by rateLimit
  },
});
