import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import type { ApiEvent, ApiInternal, ApiResult, ReadAhead } from '#shared/http/middleware/internal.ts';
import { UUID_RE } from '#shared/ids.ts';

/** Puts what the route reads ahead with its caller (`readAhead`: entities named by the path, and the caller's teams) in request.internal. */
export const readAhead = (declare: ReadAhead | undefined): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> => ({
  name: 'readAhead',
  before: (request) => {
    const declared = declare?.(request.internal.params);
    // keys hold uuids lower-cased; a path id that is no uuid names no entity, so it is not read ahead
    request.internal.readAhead = {
      entities: (declared?.entities ?? []).filter((e) => UUID_RE.test(e.id)),
      teams: declared?.teams === true,
    };
  },
});
