import { describe, expect, it } from 'vitest';
import { NotFoundError, RateLimitedError } from '#shared/errors.ts';
import { errorsAndLogging } from '#shared/http/middleware/errors-and-logging.ts';
import type { ApiInternal } from '#shared/http/middleware/internal.ts';
import { fakeEvent, fakeRequest } from './support/middleware-request.ts';

const mw = errorsAndLogging<ApiInternal>();

describe('errorsAndLogging middleware (the error mapper)', () => {
  it('puts the request id and a request log in request.internal', async () => {
    const request = fakeRequest({ internal: {} });
    delete (request.internal as Partial<ApiInternal>).requestId;
    await mw.before!(request);
    expect(request.internal.requestId).toBe('req-1');
    expect(typeof request.internal.log.info).toBe('function');
  });

  it('maps a typed error to the contract`s error shape, with the headers the request earned and the error`s own', async () => {
    const request = fakeRequest({ internal: { responseHeaders: { RateLimit: 'limit=10, remaining=0, reset=3' } } });
    request.error = new RateLimitedError(3);
    await mw.onError!(request);
    expect(request.response).toEqual({
      statusCode: 429,
      headers: {
        'content-type': 'application/json',
        RateLimit: 'limit=10, remaining=0, reset=3',
        'Retry-After': '3',
        'x-request-id': 'req-1',
      },
      body: JSON.stringify({
        error: { status: 429, code: 'rate_limited', message: 'Too many requests', details: [], request_id: 'req-1' },
      }),
    });
  });

  it('anything else is a 500 that tells the client nothing', async () => {
    const request = fakeRequest();
    request.error = new Error('secret detail');
    await mw.onError!(request);
    expect(request.response!.statusCode).toBe(500);
    expect(JSON.parse(request.response!.body!)).toEqual({
      error: { status: 500, code: 'internal', message: 'Internal server error', details: [], request_id: 'req-1' },
    });
  });

  it('adds the earned headers and the request id to a success, the handler`s own headers kept', async () => {
    const request = fakeRequest({ event: fakeEvent(), internal: { responseHeaders: { RateLimit: 'x' } } });
    request.response = { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' };
    await mw.after!(request);
    expect(request.response.headers).toEqual({ 'content-type': 'application/json', RateLimit: 'x', 'x-request-id': 'req-1' });
  });

  it('an error before the request id was kept still answers with one (the Lambda`s when the event has none)', async () => {
    const request = fakeRequest({ event: { ...fakeEvent(), requestContext: undefined } as never, internal: {} });
    delete (request.internal as Partial<ApiInternal>).requestId;
    delete (request.internal as Partial<ApiInternal>).log;
    request.error = new NotFoundError('goal', 'x');
    await mw.onError!(request);
    expect(JSON.parse(request.response!.body!).error.request_id).toBe('lambda-req');
  });
});
