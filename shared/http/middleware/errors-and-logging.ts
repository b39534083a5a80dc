import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { currentDbMetrics, currentLimiterDbMetrics } from '#shared/db/metrics.ts';
import { AppError } from '#shared/errors.ts';
import { json } from '#shared/http/json.ts';
import type { ApiEvent, ApiResult, LoggingInternal } from '#shared/http/middleware/internal.ts';
import { logger, withKeys, type Log } from '#shared/logger.ts';

/** API Gateway's request id (also its `apigw-requestid` header); the Lambda's own id when an event has none. */
export const requestIdOf = (event: ApiEvent, context: Context) => event.requestContext?.requestId ?? context.awsRequestId;

/**
 * The local stack (EXPOSE_DB_METRICS=true) reports each request's DynamoDB round trips, consumed capacity and
 * items read in response headers, so tests and `npm run bench` can assert data-access costs over HTTP; the rate
 * limiter's calls for the request (its limits read and token leases, in sequence after the caller's read) apart,
 * as `x-db-limiter-*`.
 */
export function dbMetricHeaders(): Record<string, string> {
  const m = process.env.EXPOSE_DB_METRICS === 'true' ? currentDbMetrics() : undefined;
  if (!m) return {};
  const l = currentLimiterDbMetrics()!;
  return {
    'x-db-limiter-round-trips': String(l.roundTrips),
    'x-db-limiter-calls': String(l.calls),
    'x-db-limiter-writes': String(l.writes),
    'x-db-limiter-read-units': String(l.readCapacity),
    'x-db-limiter-write-units': String(l.writeCapacity),
    'x-db-round-trips': String(m.roundTrips),
    'x-db-calls': String(m.calls),
    'x-db-writes': String(m.writes),
    'x-db-read-units': String(m.readCapacity),
    'x-db-write-units': String(m.writeCapacity),
    'x-db-items-read': String(m.itemsRead),
  };
}

/**
 * The error mapping: the one place typed errors become HTTP responses (contract section 1); only <500
 * messages reach the client.
 */
export function errorResponse(err: unknown, requestId: string, log: Log): ApiResult {
  if (err instanceof AppError) {
    log.info('request refused', {
      status: err.status,
      code: err.code,
      error_message: err.message,
      details: err.details,
      db: currentDbMetrics(),
    }); // `message` is Powertools' own key
    return json(
      err.status,
      { error: { status: err.status, code: err.code, message: err.message, details: err.details, request_id: requestId } },
      { ...err.headers, 'x-request-id': requestId, ...dbMetricHeaders() },
    );
  }
  log.error('request failed', err as Error);
  return json(
    500,
    { error: { status: 500, code: 'internal', message: 'Internal server error', details: [], request_id: requestId } },
    { 'x-request-id': requestId },
  );
}

/**
 * Request id, structured request logging and the error mapping (errorResponse). Its onError sees every
 * failure of the middlewares registered after it and of the handler; its after and onError add the headers the
 * request earned on the way (`responseHeaders`: the rate limiter's).
 */
export const errorsAndLogging = <I extends LoggingInternal>(): MiddlewareObj<ApiEvent, ApiResult, Error, Context, I> => ({
  name: 'errorsAndLogging',
  before: (request) => {
    const requestId = requestIdOf(request.event, request.context);
    request.internal.requestId = requestId;
    request.internal.log = withKeys({ request_id: requestId, route: request.event.routeKey });
  },
  after: (request) => {
    const res = request.response;
    if (res)
      res.headers = {
        ...res.headers,
        ...request.internal.responseHeaders,
        'x-request-id': request.internal.requestId,
        ...dbMetricHeaders(),
      };
    request.internal.log.info('request', { status: res?.statusCode, db: currentDbMetrics() });
  },
  onError: (request) => {
    const requestId = request.internal.requestId ?? requestIdOf(request.event, request.context);
    const log = request.internal.log ?? logger;
    const res = errorResponse(request.error, requestId, log);
    res.headers = { ...request.internal.responseHeaders, ...res.headers };
    request.response = res;
  },
});
