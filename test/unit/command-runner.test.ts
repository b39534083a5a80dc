import { afterEach, describe, expect, it, vi } from 'vitest';

// no real back-off in a unit test: the runner's waits resolve at once (their count is asserted)
const waits = vi.hoisted(() => ({ count: 0 }));
vi.mock('#shared/clock.ts', async (original) => ({
  ...(await original<typeof import('#shared/clock.ts')>()),
  sleep: async () => {
    waits.count++;
  },
}));

const { CONFLICT_ATTEMPTS, CONFLICT_DEADLINE_MS, retryOnConflict } = await import('#shared/db/conflict-retries.ts');
const { commandClock, orStored, runCommand } = await import('#shared/command/run.ts');
const { AlreadyCreatedError } = await import('#shared/db/tx-errors.ts');
const { ConcurrentUpdateError, ForbiddenError, NotFoundError } = await import('#shared/errors.ts');
import type { Db } from '#shared/db/client.ts';
import type { BaseRecord, EntityDef } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';

/** A store that answers every GetItem with `item` (the record an earlier attempt stored) and records each call. */
function fakeCtx(item?: { rec: unknown; v: number }): DataCtx & { calls: string[] } {
  const calls: string[] = [];
  const db = {
    send: async (cmd: { constructor: { name: string } }) => (calls.push(cmd.constructor.name), { Item: item }),
  } as unknown as Db;
  return { tenantId: 't1', db, calls };
}

interface Thing extends BaseRecord {
  uuid: string;
  name: string;
}
const thingEntity: EntityDef<Thing> = { type: 'thing' };

afterEach(() => {
  waits.count = 0;
  commandClock.now = () => new Date().toISOString();
});

describe('runCommand: one command shape', () => {
  it('retries a lost race within one budget: CONFLICT_ATTEMPTS attempts in all, then the 409', async () => {
    let attempts = 0;
    const run = runCommand(fakeCtx(), {
      read: async () => ++attempts,
      decide: (n) => ({ write: n }),
      write: () => {
        throw new ConcurrentUpdateError();
      },
    });
    await expect(run).rejects.toBeInstanceOf(ConcurrentUpdateError);
    expect(attempts).toBe(CONFLICT_ATTEMPTS);
    expect(waits.count).toBe(CONFLICT_ATTEMPTS - 1);
  });

  it('reads the first attempt from `first` when given (a read started beside the caller), every later one through `read`', async () => {
    const reads: string[] = [];
    let attempt = 0;
    const answer = await runCommand(fakeCtx(), {
      first: Promise.resolve('started early'),
      read: async () => (reads.push('read'), 'read again'),
      decide: (s) => ({ write: s }),
      write: (_tx, s) => {
        if (attempt++ === 0) throw new ConcurrentUpdateError();
        return s;
      },
    });
    expect([answer, reads]).toEqual(['read again', ['read']]);
  });

  it("a first read left unread by the precheck's refusal is no unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      const run = runCommand(fakeCtx(), {
        precheck: () => new ForbiddenError('viewer'),
        first: Promise.reject(new Error('the early read failed')),
        read: async () => undefined,
        decide: () => ({ write: undefined }),
        write: () => undefined,
      });
      await expect(run).rejects.toBeInstanceOf(ForbiddenError);
      await new Promise((r) => setTimeout(r, 10));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('commits a plan of several transactions in order, each part started by run.part()', async () => {
    const ctx = fakeCtx();
    const sent: number[] = [];
    ctx.db.send = (async (cmd: { input: { TransactItems: unknown[] } }) => (sent.push(cmd.input.TransactItems.length), {})) as never;
    await runCommand(ctx, {
      read: async () => undefined,
      decide: () => ({ write: ['a', 'b', 'c'] }),
      write: (tx, names, _s, run) => {
        tx.create(thingEntity, { uuid: names[0]!, name: 'first', created_at: 'x', updated_at: 'x' } as Thing);
        for (const uuid of names.slice(1)) run.part().create(thingEntity, { uuid, name: uuid, created_at: 'x', updated_at: 'x' } as Thing);
      },
    });
    expect(sent).toEqual([1, 1, 1]);
  });

  it('a retry inside an attempt shares nothing with the runner: the budget is the outer one, not multiplied', async () => {
    // what the check-in's retryOnConflict(() => retryOnConflict(...)) did: 16 x 16; one budget now, CONFLICT_ATTEMPTS
    let attempts = 0;
    await expect(
      retryOnConflict(async () => {
        attempts++;
        throw new ConcurrentUpdateError();
      }),
    ).rejects.toBeInstanceOf(ConcurrentUpdateError);
    expect(attempts).toBe(CONFLICT_ATTEMPTS);
    expect(CONFLICT_ATTEMPTS).toBeGreaterThanOrEqual(32);
  });

  it('starts no retry past CONFLICT_DEADLINE_MS: a slow race answers the 409 inside the route timeout', async () => {
    let now = 0;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => now);
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    let attempts = 0;
    try {
      await expect(
        retryOnConflict(async () => {
          attempts++;
          now += 1000; // each attempt takes a second
          throw new ConcurrentUpdateError();
        }),
      ).rejects.toBeInstanceOf(ConcurrentUpdateError);
    } finally {
      clock.mockRestore();
      vi.mocked(Math.random).mockRestore();
    }
    // after the 7th attempt 7 s have gone: a retry (and its back-off) would start past the deadline
    expect(CONFLICT_DEADLINE_MS).toBe(7000);
    expect(attempts).toBe(7);
    expect(waits.count).toBe(6);
  });

  it('fixes the ids and the clock once: every retried attempt reads, decides and writes with the same ones', async () => {
    let tick = 0;
    commandClock.now = () => `2025-01-01T00:00:0${tick++}.000Z`;
    const seen: Array<{ now: string; ids: unknown; attempt: number }> = [];
    const ids = { thing: 'id-1' };
    const result = await runCommand(fakeCtx(), {
      ids,
      read: async (run) => run,
      decide: (run, now, decidedIds) => ({ write: { ...run, now, ids: decidedIds } }),
      write: (_tx, w) => {
        seen.push(w);
        if (seen.length < 3) throw new ConcurrentUpdateError();
        return w.attempt;
      },
    });
    expect(result).toBe(2);
    expect(seen.map((s) => s.attempt)).toEqual([0, 1, 2]);
    expect(new Set(seen.map((s) => s.now))).toEqual(new Set(['2025-01-01T00:00:00.000Z']));
    expect(seen.every((s) => s.ids === ids)).toBe(true);
    expect(tick).toBe(1);
  });

  it("a per-attempt clock (the caller's own) is read again after each attempt's read: a retry stamps after what it read", async () => {
    let tick = 0;
    const clock = () => `2025-01-01T00:00:0${tick++}.000Z`;
    const seen: Array<{ read: string; decided: string; written: string }> = [];
    await runCommand(fakeCtx(), {
      clock: { now: clock, perAttempt: true },
      read: async (run) => run.now,
      decide: (read, now) => ({ write: { read, decided: now } }),
      write: (_tx, w, _s, run) => {
        seen.push({ ...w, written: run.now });
        if (seen.length < 2) throw new ConcurrentUpdateError();
      },
    });
    expect(seen).toEqual([
      { read: '2025-01-01T00:00:00.000Z', decided: '2025-01-01T00:00:01.000Z', written: '2025-01-01T00:00:01.000Z' },
      { read: '2025-01-01T00:00:02.000Z', decided: '2025-01-01T00:00:03.000Z', written: '2025-01-01T00:00:03.000Z' },
    ]);
  });

  it('answers a refusal as decided: nothing written, no retry', async () => {
    let reads = 0;
    const write = vi.fn();
    await expect(
      runCommand(fakeCtx(), { read: async () => ++reads, decide: () => ({ error: new NotFoundError('Thing', 'x') }), write }),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect(reads).toBe(1);
    expect(write).not.toHaveBeenCalled();
  });

  it('runs the precheck before anything is read, and a refusal there reads nothing', async () => {
    const order: string[] = [];
    const refused = runCommand(fakeCtx(), {
      precheck: () => (order.push('precheck'), new ForbiddenError('no')),
      read: async () => order.push('read'),
      decide: () => ({ write: 1 }),
      write: () => 1,
    });
    await expect(refused).rejects.toBeInstanceOf(ForbiddenError);
    expect(order).toEqual(['precheck']);
    order.length = 0;
    await runCommand(fakeCtx(), {
      precheck: () => (order.push('precheck'), undefined),
      read: async () => order.push('read'),
      decide: () => ({ write: 1 }),
      write: () => order.push('write'),
    });
    expect(order).toEqual(['precheck', 'read', 'write']);
  });

  it('createdOrStored: a create an earlier attempt of the request stored answers with the stored record, then runs after', async () => {
    const stored: Thing = { uuid: 'id-1', name: 'first', created_at: 'x', updated_at: 'x' } as Thing;
    const ctx = fakeCtx({ rec: stored, v: 1 });
    const after = vi.fn((r: { thing: Thing; from: string }) => ({ ...r, done: true }));
    const result = await runCommand(ctx, {
      ids: { thing: 'id-1' },
      read: async () => undefined,
      decide: (_s, _now, ids) => ({ write: { uuid: ids.thing, name: 'second' } as Thing }),
      write: (): { thing: Thing; from: string } => {
        throw new AlreadyCreatedError('thing', 'id-1');
      },
      stored: orStored(thingEntity, 'id-1', (thing) => ({ thing, from: 'stored' })),
      after,
    });
    expect(result).toEqual({ thing: stored, from: 'stored', done: true });
    expect(after).toHaveBeenCalledTimes(1);
    expect(ctx.calls).toEqual(['GetCommand']);
  });

  it('an AlreadyCreatedError of another record is not this create: it is answered as is', async () => {
    const run = runCommand(fakeCtx(), {
      read: async () => undefined,
      decide: () => ({ write: 1 }),
      write: () => {
        throw new AlreadyCreatedError('thing', 'other');
      },
      stored: orStored(thingEntity, 'id-1', () => 0),
    });
    await expect(run).rejects.toBeInstanceOf(AlreadyCreatedError);
  });
});
