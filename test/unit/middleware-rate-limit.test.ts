import { describe, expect, it, vi } from 'vitest';
import type { Caller } from '#shared/auth/caller.ts';
import { userEntity, type UserRecord } from '#shared/domain/users/entity.ts';
import { RateLimitedError, UnauthorizedError } from '#shared/errors.ts';
import { rateLimit } from '#shared/http/middleware/rate-limit.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { before, fakeRequest, status, TENANT, USER } from './support/middleware-request.ts';

const data = { tenantId: TENANT, db: {} as never };
const who: Caller = { tenantId: TENANT, userId: USER, role: 'member', user: { uuid: USER } as UserRecord };
const internalWith = (caller: Promise<{ caller: Caller; teams?: Promise<Set<string>> }>) => ({
  data,
  userId: USER,
  loader: new Loader(data),
  caller,
});

describe('rateLimit middleware', () => {
  it('puts the admitted caller`s context in request.internal as a promise, and the limiter`s headers', async () => {
    const headers = { 'RateLimit-Policy': '10;w=1', RateLimit: 'limit=10, remaining=9, reset=1' };
    const take = vi.fn(async () => headers);
    const teams = Promise.resolve(new Set(['t1']));
    const request = fakeRequest({ internal: internalWith(Promise.resolve({ caller: who, teams })) });
    expect(await before(rateLimit({ take }), request)).toBeUndefined();
    const ctx = await request.internal.ctx;
    expect(take).toHaveBeenCalledWith(TENANT, USER);
    expect(request.internal.responseHeaders).toEqual(headers);
    expect(ctx).toMatchObject({ tenantId: TENANT, db: data.db, caller: who, requestId: 'req-1', loader: request.internal.loader });
    expect(await ctx.teams()).toEqual(new Set(['t1'])); // the teams read ahead with the caller
    expect(await ctx.loader.one(userEntity, USER)).toBe(who.user); // primed: no read
  });

  it('is not awaited: the promise is pending until the caller is read', async () => {
    let resolve!: (v: { caller: Caller }) => void;
    const take = vi.fn(async () => undefined);
    const request = fakeRequest({ internal: internalWith(new Promise((r) => (resolve = r))) });
    await before(rateLimit({ take }), request);
    expect(take).not.toHaveBeenCalled();
    resolve({ caller: who });
    await expect(request.internal.ctx).resolves.toMatchObject({ caller: who });
    expect(request.internal.responseHeaders).toBeUndefined();
  });

  it('a refused caller`s 401 takes no budget', async () => {
    const take = vi.fn(async () => undefined);
    const request = fakeRequest({ internal: internalWith(Promise.reject(new UnauthorizedError())) });
    await before(rateLimit({ take }), request);
    expect(await status(request.internal.ctx)).toBe(401);
    expect(take).not.toHaveBeenCalled();
  });

  it('an exhausted budget rejects the context with the limiter`s 429', async () => {
    const take = vi.fn(async () => Promise.reject(new RateLimitedError(3)));
    const request = fakeRequest({ internal: internalWith(Promise.resolve({ caller: who })) });
    await before(rateLimit({ take }), request);
    expect(await status(request.internal.ctx)).toBe(429);
  });
});
