import { describe, expect, it } from 'vitest';
import { readAhead } from '#shared/http/middleware/read-ahead.ts';
import { before, fakeRequest } from './support/middleware-request.ts';

const UUID = '0b8a3c1e-5a4f-4c3e-9a44-2f1d7c9e0a11';

describe('readAhead middleware', () => {
  it('puts the route`s declared entities (uuids only) and teams flag in request.internal', async () => {
    const request = fakeRequest({ internal: { params: { id: UUID, other: 'nope' } } });
    await before(
      readAhead((p) => ({
        entities: [
          { type: 'goal', id: p.id! },
          { type: 'goal', id: p.other! },
        ],
        teams: true,
      })),
      request,
    );
    expect(request.internal.readAhead).toEqual({ entities: [{ type: 'goal', id: UUID }], teams: true });
  });

  it('a route without a declaration reads nothing ahead', async () => {
    const request = fakeRequest({ internal: { params: { id: UUID } } });
    await before(readAhead(undefined), request);
    expect(request.internal.readAhead).toEqual({ entities: [], teams: false });
  });
});
