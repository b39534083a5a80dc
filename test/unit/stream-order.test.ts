import { describe, expect, it } from 'vitest';
import { perItemInOrder } from '#shared/stream/per-item-order.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Rec {
  key: string;
  n: number;
  ms: number;
  fail?: boolean;
}

describe('stream records: concurrent across items, in order within one item', () => {
  it('keeps each key in order, runs keys concurrently, never more than the limit at once (50 random batches)', async () => {
    for (let round = 0; round < 50; round++) {
      const records: Rec[] = Array.from({ length: 40 }, (_, n) => ({
        key: `k${Math.floor(Math.random() * 6)}`,
        n,
        ms: Math.floor(Math.random() * 4),
      }));
      const done: Rec[] = [];
      let active = 0;
      let peak = 0;
      const run = perItemInOrder<Rec>(
        (r) => r.key,
        4,
        async (r) => {
          peak = Math.max(peak, ++active);
          await tick(r.ms);
          active--;
          done.push(r);
        },
      );
      await Promise.all(records.map(run));
      expect(done).toHaveLength(records.length);
      expect(peak).toBeLessThanOrEqual(4);
      for (const key of new Set(records.map((r) => r.key))) {
        const seen = done.filter((r) => r.key === key).map((r) => r.n);
        expect(seen).toEqual([...seen].sort((a, b) => a - b));
      }
    }
  });

  it('runs different items at the same time (a slow item does not hold the others)', async () => {
    const order: string[] = [];
    const run = perItemInOrder<Rec>(
      (r) => r.key,
      8,
      async (r) => {
        await tick(r.ms);
        order.push(`${r.key}${r.n}`);
      },
    );
    await Promise.all(
      [
        { key: 'a', n: 1, ms: 30 },
        { key: 'b', n: 2, ms: 0 },
        { key: 'c', n: 3, ms: 0 },
      ].map(run),
    );
    expect(order).toEqual(['b2', 'c3', 'a1']);
  });

  it('fails the later records of an item whose earlier record failed, without running them; other items go on', async () => {
    const ran: number[] = [];
    const run = perItemInOrder<Rec>(
      (r) => r.key,
      2,
      async (r) => {
        await tick(r.ms);
        if (r.fail) throw new Error('boom');
        ran.push(r.n);
      },
    );
    const results = await Promise.allSettled(
      [
        { key: 'a', n: 1, ms: 5, fail: true },
        { key: 'b', n: 2, ms: 1 },
        { key: 'a', n: 3, ms: 0 },
        { key: 'b', n: 4, ms: 0 },
      ].map(run),
    );
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect(ran.sort()).toEqual([2, 4]);
  });
});
