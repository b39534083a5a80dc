import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import type { ApiEvent, ApiInternal, ApiResult } from '#shared/http/middleware/internal.ts';
import { UUID_RE } from '#shared/ids.ts';
import { queryPairs } from '#shared/list/params.ts';

/** Path parameters; a uuid is the same uuid in any case, and records store it lower-cased. */
function pathParams(event: ApiEvent): Record<string, string> {
  return Object.fromEntries(
    Object.entries(event.pathParameters ?? {}).map(([k, v]) => [k, v && UUID_RE.test(v) ? v.toLowerCase() : (v ?? '')]),
  );
}

/** Puts the path parameters (`params`) and the query string pairs, repeated keys kept apart (`query`), in request.internal. */
export const pathAndQuery = (): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> => ({
  name: 'pathAndQuery',
  before: (request) => {
    request.internal.params = pathParams(request.event);
    request.internal.query = queryPairs(request.event.rawQueryString);
  },
});
