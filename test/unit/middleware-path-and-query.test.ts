import { describe, expect, it } from 'vitest';
import { pathAndQuery } from '#shared/http/middleware/path-and-query.ts';
import { before, fakeEvent, fakeRequest } from './support/middleware-request.ts';

describe('pathAndQuery middleware', () => {
  it('puts path parameters (uuids lower-cased, others as sent) and query pairs (repeated keys apart) in request.internal', async () => {
    const id = 'AB8A3C1E-5A4F-4C3E-9A44-2F1D7C9E0A11';
    const request = fakeRequest({
      event: fakeEvent({ pathParameters: { id, slug: 'Not-A-Uuid' }, rawQueryString: 'label=a&label=b&q=x%20y' }),
    });
    await before(pathAndQuery(), request);
    expect(request.internal.params).toEqual({ id: id.toLowerCase(), slug: 'Not-A-Uuid' });
    expect(request.internal.query).toEqual([
      ['label', 'a'],
      ['label', 'b'],
      ['q', 'x y'],
    ]);
  });

  it('no path parameters and no query string are empty', async () => {
    const request = fakeRequest();
    await before(pathAndQuery(), request);
    expect(request.internal.params).toEqual({});
    expect(request.internal.query).toEqual([]);
  });
});
