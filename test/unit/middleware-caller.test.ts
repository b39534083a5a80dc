import { describe, expect, it, vi } from 'vitest';
import type { Caller } from '#shared/auth/caller.ts';
import { UnauthorizedError } from '#shared/errors.ts';
import { before, fakeRequest, status, TENANT, USER } from './support/middleware-request.ts';

const loadCaller = vi.hoisted(() => vi.fn());
vi.mock('#shared/auth/load-caller.ts', () => ({ loadCaller, callerTeamUuids: vi.fn() }));
const { caller } = await import('#shared/http/middleware/caller.ts');

const data = { tenantId: TENANT, db: {} as never };
const read = { entities: [{ type: 'goal', id: '0b8a3c1e-5a4f-4c3e-9a44-2f1d7c9e0a11' }], teams: true };

describe('caller middleware', () => {
  it('starts the caller`s read with the read ahead and puts it in request.internal as a promise, not awaited', async () => {
    let resolve!: (v: { caller: Caller }) => void;
    loadCaller.mockReturnValueOnce(new Promise((r) => (resolve = r)));
    const request = fakeRequest({ internal: { data, userId: USER, readAhead: read } });
    expect(await before(caller(), request)).toBeUndefined(); // returned while the read is still pending
    expect(loadCaller).toHaveBeenCalledWith(data, USER, { readAhead: read.entities, teams: true, service: false });
    const who = { caller: { tenantId: TENANT, userId: USER, role: 'member' } as Caller };
    resolve(who);
    await expect(request.internal.caller).resolves.toBe(who);
  });

  it('an unknown user`s 401 is the promise`s, for whoever awaits it', async () => {
    loadCaller.mockRejectedValueOnce(new UnauthorizedError('User is unknown or inactive'));
    const request = fakeRequest({ internal: { data, userId: USER, readAhead: { entities: [], teams: false } } });
    expect(await before(caller(), request)).toBeUndefined();
    expect(await status(request.internal.caller)).toBe(401);
  });
});
