import type { MiddlewareObj, Request } from '@middy/core';
import type { Context } from 'aws-lambda';
import type { ApiEvent, ApiInternal, ApiResult } from '#shared/http/middleware/internal.ts';
import { AppError } from '#shared/errors.ts';

export type FakeRequest = Request<ApiEvent, ApiResult, Error, Context, ApiInternal>;

export const TENANT = '0b8a3c1e-5a4f-4c3e-9a44-2f1d7c9e0a11';
export const USER = '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f';

/** An API Gateway event for `routeKey`, with the given headers, claims, path parameters and query string. */
export function fakeEvent(
  opts: {
    routeKey?: string;
    headers?: Record<string, string>;
    claims?: Record<string, unknown>;
    pathParameters?: Record<string, string>;
    rawQueryString?: string;
  } = {},
): ApiEvent {
  const routeKey = opts.routeKey ?? 'GET /rest/v2/goals/{id}';
  const [method] = routeKey.split(' ');
  return {
    routeKey,
    rawQueryString: opts.rawQueryString ?? '',
    headers: opts.headers ?? {},
    pathParameters: opts.pathParameters,
    isBase64Encoded: false,
    requestContext: {
      requestId: 'req-1',
      http: { method },
      authorizer: { jwt: { claims: opts.claims ?? { tenant_uuid: TENANT, user_uuid: USER }, scopes: [] } },
    },
  } as unknown as ApiEvent;
}

/** One request as middy hands it to a middleware: `internal` holds what earlier middlewares would have put there. */
export function fakeRequest(opts: { event?: ApiEvent; internal?: Partial<ApiInternal> } = {}): FakeRequest {
  return {
    event: opts.event ?? fakeEvent(),
    context: { awsRequestId: 'lambda-req' } as Context,
    response: undefined,
    error: undefined,
    internal: { requestId: 'req-1', log: { info: () => undefined, error: () => undefined }, ...opts.internal } as ApiInternal,
  };
}

/** Runs the middleware's `before` on `request`; returns what it returned (undefined: the chain goes on). */
export const before = async (mw: MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal>, request: FakeRequest) =>
  mw.before!(request);

/** The HTTP status a promise is refused with, or 'ok'. */
export const status = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof AppError ? e.status : e),
  );
