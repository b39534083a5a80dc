import { describe, expect, it, vi } from 'vitest';
import type { RequestCtx } from '#shared/http/middleware/internal.ts';
import { earlyLists } from '#shared/http/middleware/early-lists.ts';
import { RateLimitedError } from '#shared/errors.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { before, fakeRequest, status, TENANT } from './support/middleware-request.ts';

const data = { tenantId: TENANT, db: {} as never };

describe('earlyLists middleware', () => {
  it('starts the route`s early work before the caller is admitted, with the admission promise, and puts its promise in request.internal', async () => {
    let admit!: (ctx: RequestCtx) => void;
    const ctx = new Promise<RequestCtx>((r) => (admit = r));
    const loader = new Loader(data);
    const seen: string[] = [];
    const early = vi.fn(async (req: { ctx: Promise<RequestCtx> }) => {
      seen.push('started');
      const admitted = await req.ctx;
      return `plan for ${admitted.requestId}`;
    });
    const request = fakeRequest({ internal: { data, loader, params: { id: 'x' }, query: [['q', '1']], ctx } });
    expect(await before(earlyLists(early), request)).toBeUndefined();
    expect(seen).toEqual(['started']); // before admission
    expect(early).toHaveBeenCalledWith({ data, loader, params: { id: 'x' }, query: [['q', '1']], event: request.event, ctx });
    admit({ requestId: 'req-1' } as RequestCtx);
    await expect(request.internal.early).resolves.toBe('plan for req-1');
  });

  it('a refused admission rejects the early work`s promise (the handler never awaits it)', async () => {
    const ctx = Promise.reject(new RateLimitedError(1));
    ctx.catch(() => undefined);
    const request = fakeRequest({ internal: { data, loader: new Loader(data), params: {}, query: [], ctx } });
    await before(
      earlyLists(async (req) => (await req.ctx).requestId),
      request,
    );
    expect(await status(request.internal.early)).toBe(429);
  });

  it('a route without one: undefined', async () => {
    const request = fakeRequest({ internal: { data, loader: new Loader(data), params: {}, query: [], ctx: new Promise(() => undefined) } });
    await before(earlyLists(undefined), request);
    await expect(request.internal.early).resolves.toBeUndefined();
  });
});
