import { describe, expect, it, vi } from 'vitest';
import { ForbiddenError, UnauthorizedError } from '#shared/errors.ts';
import type { ApiResult, RequestCtx } from '#shared/http/middleware/internal.ts';
import { before, fakeEvent, fakeRequest, status, TENANT, USER } from './support/middleware-request.ts';

const runIdempotent = vi.hoisted(() => vi.fn());
vi.mock('#shared/http/idempotency.ts', async (actual) => ({ ...(await actual<object>()), runIdempotent }));
const { idempotency } = await import('#shared/http/middleware/idempotency.ts');

const ok: ApiResult = { statusCode: 201, body: '{}' };
const log = { info: vi.fn(), error: vi.fn() };
const ctx = { tenantId: TENANT, caller: { tenantId: TENANT, userId: USER }, log } as unknown as RequestCtx;
const post = (headers: Record<string, string>) => fakeEvent({ routeKey: 'POST /rest/v2/labels', headers });

describe('idempotency middleware', () => {
  it('answers 400 for a malformed Idempotency-Key on a POST', async () => {
    const request = fakeRequest({ event: post({ 'idempotency-key': 'bad key\u00e9' }) });
    expect(await status(Promise.resolve().then(() => before(idempotency({}), request)))).toBe(400);
  });

  it('without a key (or not a POST) the handler just runs', async () => {
    for (const event of [post({}), fakeEvent({ headers: { 'idempotency-key': 'k1' } })]) {
      const request = fakeRequest({ event });
      await before(idempotency({}), request);
      const run = vi.fn(async () => ok);
      await expect(request.internal.respond(run)).resolves.toBe(ok);
      expect(run).toHaveBeenCalledTimes(1);
    }
    expect(runIdempotent).not.toHaveBeenCalled();
  });

  it('with a key, runs the handler through runIdempotent: typed errors become responses kept for replay, and the replay gate gets the validated body', async () => {
    const authorizeReplay = vi.fn(async () => undefined);
    const data = { tenantId: TENANT, db: { name: 'db' } as never };
    const request = fakeRequest({
      event: post({ 'idempotency-key': 'k1' }),
      internal: {
        ctx: Promise.resolve(ctx),
        data,
        userId: USER,
        params: { id: 'p' },
        read: { kind: 'json', value: { a: 1 } },
        body: async () => ({ a: 1 }),
      },
    });
    await before(idempotency({ sealed: true, authorizeReplay }), request);
    runIdempotent.mockImplementationOnce(async (scope: { authorizeReplay: () => Promise<void> }, run: () => Promise<ApiResult>) => {
      await scope.authorizeReplay();
      return run();
    });
    const res = await request.internal.respond(async () => Promise.reject(new ForbiddenError('no')));
    expect(res.statusCode).toBe(403);
    expect(JSON.parse(res.body!)).toMatchObject({ error: { status: 403, code: 'forbidden', request_id: 'req-1' } });
    expect(runIdempotent.mock.calls[0]![0]).toMatchObject({
      db: data.db,
      tenantId: TENANT,
      userId: USER,
      route: 'POST /rest/v2/labels',
      params: { id: 'p' },
      key: 'k1',
      body: { kind: 'json', value: { a: 1 } },
      sealed: true,
    });
    expect(authorizeReplay).toHaveBeenCalledWith({ ctx, params: { id: 'p' }, body: { a: 1 }, event: request.event });
  });

  it("the record is begun beside the caller read, with the token's tenant and user: a refused caller (401) is answered, never kept", async () => {
    const refused = new UnauthorizedError('inactive');
    const admitted = Promise.reject(refused);
    admitted.catch(() => undefined);
    const request = fakeRequest({
      event: post({ 'idempotency-key': 'k3' }),
      internal: { ctx: admitted, data: { tenantId: TENANT, db: {} as never }, userId: USER, params: {}, body: async () => undefined },
    });
    await before(idempotency({}), request);
    let inside: unknown;
    runIdempotent.mockImplementationOnce(async (scope: { tenantId: string; userId: string }, run: () => Promise<ApiResult>) => {
      expect([scope.tenantId, scope.userId]).toEqual([TENANT, USER]);
      // Powertools drops the record of a run that throws, and throws it on
      return run().catch((err: unknown) => {
        inside = err;
        throw err;
      });
    });
    const handler = vi.fn(async () => ok);
    await expect(request.internal.respond(handler)).rejects.toBe(refused);
    expect(inside).not.toBe(refused); // thrown inside as no answer to keep, not turned into a 401 response
    expect(inside).toBeInstanceOf(Error);
    expect(handler).not.toHaveBeenCalled();
  });

  it('a failure that is no typed error is not kept: it reaches the error mapper', async () => {
    const request = fakeRequest({
      event: post({ 'idempotency-key': 'k2' }),
      internal: { ctx: Promise.resolve(ctx), data: { tenantId: TENANT, db: {} as never }, params: {}, body: async () => undefined },
    });
    await before(idempotency({}), request);
    runIdempotent.mockImplementationOnce(async (_: unknown, run: () => Promise<ApiResult>) => run());
    await expect(request.internal.respond(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });
});
