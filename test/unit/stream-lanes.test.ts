import { describe, expect, it } from 'vitest';
import { deliverInLanes, splitLanes, type LaneOptions } from '../../scripts/lib/stream-lanes.ts';

interface Rec {
  key: string;
  seq: number;
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Records of `keys` items, `per` changes each, interleaved in shard order as writes of several clients are. */
const records = (keys: number, per: number): Rec[] =>
  Array.from({ length: keys * per }, (_, i) => ({ key: `item${(i * 7) % keys}`, seq: i + 1 }));

const options = (over: Partial<LaneOptions<Rec>> & Pick<LaneOptions<Rec>, 'deliver'>): LaneOptions<Rec> => ({
  keyOf: (r) => r.key,
  seqOf: (r) => String(r.seq),
  lanes: 4,
  batchSize: 10,
  maxAttempts: 3,
  backoffMs: () => 20,
  deadLetter: () => undefined,
  running: () => true,
  ...over,
});

/** Each key's sequence numbers in the order they were applied. */
const perKey = (applied: Rec[]) => {
  const out = new Map<string, number[]>();
  for (const r of applied) out.set(r.key, [...(out.get(r.key) ?? []), r.seq]);
  return out;
};

describe('local stream poller: a read delivered as the event source mapping does', () => {
  it('puts every change of an item in one lane, in shard order, and spreads items over the lanes', () => {
    const recs = records(9, 5);
    const lanes = splitLanes(recs, (r) => r.key, 4);
    expect(lanes).toHaveLength(4);
    expect(lanes.flat()).toHaveLength(recs.length);
    for (const lane of lanes) {
      expect(lane.map((r) => r.seq)).toEqual([...lane.map((r) => r.seq)].sort((a, b) => a - b));
      for (const other of lanes) if (other !== lane) expect(other.some((r) => lane.some((x) => x.key === r.key))).toBe(false);
    }
    expect(Math.max(...lanes.map((l) => l.length)) - Math.min(...lanes.map((l) => l.length))).toBeLessThanOrEqual(5);
  });

  it('delivers batches of different items at once and each item in order (30 random runs)', async () => {
    for (let round = 0; round < 30; round++) {
      const recs = records(12, 8);
      const applied: Rec[] = [];
      let active = 0;
      let peak = 0;
      const done = await deliverInLanes(
        recs,
        options({
          deliver: async (batch) => {
            peak = Math.max(peak, ++active);
            expect(batch.length).toBeLessThanOrEqual(10);
            for (const r of batch) {
              await tick(Math.floor(Math.random() * 3));
              applied.push(r);
            }
            active--;
            return -1;
          },
        }),
      );
      expect(done).toBe(true);
      expect(applied.map((r) => r.seq).sort((a, b) => a - b)).toEqual(recs.map((r) => r.seq));
      for (const [, seqs] of perKey(applied)) expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(peak).toBe(4); // the lanes at once, never more
    }
  });

  it('delivers a failed batch again from its failed record after a back-off; the other lanes go on meanwhile', async () => {
    const recs = records(8, 4);
    const bad = recs.find((r) => r.key === 'item3' && r.seq > 10)!;
    let failures = 0;
    const applied: Rec[] = [];
    const delivered: number[][] = [];
    const retried: number[] = [];
    await deliverInLanes(
      recs,
      options({
        lanes: 2,
        batchSize: 4,
        deliver: async (batch) => {
          delivered.push(batch.map((r) => r.seq));
          for (const [i, r] of batch.entries()) {
            if (r === bad && failures < 2) {
              failures++;
              return i; // the processor fails this record and every later one of its item (partial batch response)
            }
            applied.push(r);
            await tick(1);
          }
          return -1;
        },
        retrying: (r, n) => retried.push(r.seq, n),
        backoffMs: () => 60,
      }),
    );
    expect(retried).toEqual([bad.seq, 1, bad.seq, 2]);
    // every record applied once, except that what follows the failed one in its batch was delivered again
    expect(new Set(applied.map((r) => r.seq)).size).toBe(recs.length);
    // redelivered from the failed record on: the batch's records before it are not delivered again
    const withBad = delivered.filter((b) => b.includes(bad.seq));
    expect(withBad).toHaveLength(3);
    expect(withBad.slice(1).map((b) => b[0])).toEqual([bad.seq, bad.seq]);
    // item order held across the retries
    for (const [, seqs] of perKey(applied)) expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
    // the other lane was not held by the back-off: all of its records applied before the failed one was
    const badAt = applied.indexOf(bad);
    const otherLane = splitLanes(recs, (r) => r.key, 2).find((l) => !l.includes(bad))!;
    for (const r of otherLane) expect(applied.indexOf(r)).toBeLessThan(badAt);
  });

  it('dead-letters a record after its attempts and moves its lane on, the item’s later changes after it', async () => {
    const recs = records(3, 4);
    const bad = recs.find((r) => r.key === 'item1')!;
    const dead: Array<[number, number]> = [];
    const applied: Rec[] = [];
    let badDeliveries = 0;
    const done = await deliverInLanes(
      recs,
      options({
        lanes: 3,
        maxAttempts: 3,
        deliver: async (batch) => {
          for (const [i, r] of batch.entries()) {
            if (r === bad) {
              badDeliveries++;
              return i;
            }
            applied.push(r);
          }
          return -1;
        },
        deadLetter: (r, n) => dead.push([r.seq, n]),
      }),
    );
    expect(done).toBe(true);
    expect(badDeliveries).toBe(3);
    expect(dead).toEqual([[bad.seq, 3]]);
    expect(applied.filter((r) => r.key === 'item1').map((r) => r.seq)).toEqual(
      recs.filter((r) => r.key === 'item1' && r !== bad).map((r) => r.seq),
    );
    expect(applied).toHaveLength(recs.length - 1);
  });

  it('bisects a batch whose handler threw, so one bad record fails only itself', async () => {
    const recs = records(1, 8); // one item: one lane, one batch of 8
    const bad = recs[5]!;
    const sizes: number[] = [];
    const applied = new Set<number>();
    const dead: number[] = [];
    await deliverInLanes(
      recs,
      options({
        batchSize: 8,
        deliver: async (batch) => {
          sizes.push(batch.length);
          if (batch.includes(bad)) throw new Error('boom');
          for (const r of batch) applied.add(r.seq);
          return -1;
        },
        deadLetter: (r) => dead.push(r.seq),
      }),
    );
    expect(dead).toEqual([bad.seq]);
    expect([...applied].sort((a, b) => a - b)).toEqual(recs.filter((r) => r !== bad).map((r) => r.seq));
    expect(sizes.slice(0, 4)).toEqual([8, 4, 4, 2]); // whole, first half, second half, its first half...
  });

  it('stops between batches once the poller stops, and says the read was not delivered in full', async () => {
    let running = true;
    let calls = 0;
    const done = await deliverInLanes(
      records(1, 30),
      options({
        running: () => running,
        deliver: async () => {
          calls++;
          running = false;
          return -1;
        },
      }),
    );
    expect(done).toBe(false);
    expect(calls).toBe(1);
  });
});
