import { describe, expect, it } from 'vitest';
import type { Db } from '#shared/db/client.ts';
import type { ListEntry } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { goalEntity } from '#shared/domain/goals/entity.ts';
import type { Loader } from '#shared/list/entity-cache.ts';
import { entriesFrom, type Sizing } from '#shared/list/streams.ts';
import { MemoryTable } from '../../scripts/lib/bench-full-seed-memory.ts';

/**
 * How the list engine's key streams size their Queries (shared/list/streams.ts): a page of a sharded list must
 * read about the keys it returns (issue 9: items read <= 2 x returned + 20).
 */
const T = 'streams';
const shard = (n: number) => `T#t1#key_result@rm_status#on_track#${n}`;
const sortKey = (i: number) => `2026-01-01T00:00:${String(i).padStart(6, '0')}Z#id${i}`;

/** Shards whose entries are the positions `order[n]` of the merged list (each position in one shard). */
function table(order: number[][]) {
  const mem = new MemoryTable(T);
  mem.load(
    order.flatMap((positions, n) =>
      positions.map((i) => ({ PK: `T#t1#goal#id${i}`, SK: 'RM#status', GSI1PK: shard(n), GSI1SK: sortKey(i), id: `id${i}` })),
    ),
  );
  const queries: Array<{ partition: string; limit: number | undefined; keys: number }> = [];
  const db = {
    send: async (command: {
      input: { ExpressionAttributeValues?: Record<string, unknown>; Limit?: number };
      constructor: { name: string };
    }) => {
      const out = (await mem.db.send(command as never)) as { Items?: unknown[] };
      if (command.constructor.name === 'QueryCommand')
        queries.push({
          partition: String(command.input.ExpressionAttributeValues?.[':pk']),
          limit: command.input.Limit,
          keys: out.Items?.length ?? 0,
        });
      return out;
    },
  } as unknown as Db;
  return { ctx: { tenantId: 't1', db } as DataCtx, queries };
}

/**
 * Takes `take` entries of the merged shards as the engine reads a page of `wanted` keys (first chunk as the engine
 * sizes it); `from`: a cursor page's position (the sort key of the page before's last entry, at that position).
 */
async function read(order: number[][], wanted: number, take = wanted, from?: number) {
  const { ctx, queries } = table(order);
  const sizing: Sizing = { toEnd: false };
  const firstChunk = wanted + Math.min(10, Math.ceil(wanted / 4));
  const source = { partitions: order.map((_, n) => shard(n)) };
  const stream = entriesFrom(
    ctx,
    {} as Loader,
    goalEntity,
    source,
    { descending: false, firstChunk, wanted },
    sizing,
    from === undefined ? undefined : sortKey(from),
  );
  const got: ListEntry[] = [];
  for (let r = await stream.next(); !r.done && got.length < take; r = got.length < take ? await stream.next() : r) got.push(r.value);
  return { ids: got.map((e) => Number(e.id.slice(2))), limits: queries.map((q) => q.limit), keys: queries.reduce((n, q) => n + q.keys, 0) };
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('merged shards (a status list in 2 shards, a page of 20 and one more)', () => {
  it('each shard reads its share and one more first: an even split needs nothing more', async () => {
    const r = await read([range(0, 60).filter((i) => i % 2 === 0), range(0, 60).filter((i) => i % 2 === 1)], 21);
    expect(r.ids).toEqual(range(0, 21));
    expect(r.limits).toEqual([12, 12]);
    expect(r.keys).toBe(24);
  });

  it('a shard that runs dry asks for what the page still lacks, not a fixed 10 or more', async () => {
    // the page's first 15 keys all in shard 0: it runs dry at the 12th, with 9 keys of the page still to come
    const r = await read(
      [
        [...range(0, 15), ...range(30, 40)],
        [...range(15, 30), ...range(40, 50)],
      ],
      21,
    );
    expect(r.ids).toEqual(range(0, 21));
    expect(r.limits).toEqual([12, 12, 9]);
    expect(r.keys).toBe(33);
  });

  it('the worst split reads the page plus one shard share (33 keys for 21), where a fixed follow-up read 36', async () => {
    const r = await read([range(0, 40), range(40, 80)], 21);
    expect(r.ids).toEqual(range(0, 21));
    expect(r.limits).toEqual([12, 12, 9]);
    expect(r.keys).toBe(21 + 12);
  });

  it("a reader that stops at a dry shard's last key reads nothing more", async () => {
    // shard 0 holds positions 0..11 and 21..; shard 1 positions 12..20: shard 0 runs dry exactly at the 12th key
    const order = [[...range(0, 11), 20, ...range(21, 40)], range(11, 20).concat(range(40, 50))];
    const r = await read(order, 21);
    expect(r.ids).toEqual(range(0, 21));
    expect(r.limits).toEqual([12, 12]);
  });

  it('a reader taking more than it said (entries it does not accept) reads on in growing Queries', async () => {
    const r = await read([range(0, 200), range(200, 400)], 21, 100);
    expect(r.ids).toEqual(range(0, 100));
    // 9 owed, then nothing: the follow-ups double from the usual step (12 → 24, 48, 96) as if the cap had not been
    expect(r.limits).toEqual([12, 12, 9, 24, 48, 96]);
  });
});

describe('a cursor page of merged shards (a page of 7 and one more, after position 9)', () => {
  it("reads the cursor's own key as one more: a shard holding the whole page needs one follow-up Query, not two", async () => {
    // the cursor's key (position 9) and the next page's 8 keys all in shard 0
    const r = await read([range(0, 30), range(30, 60)], 8, 8, 9);
    expect(r.ids).toEqual(range(10, 18));
    // each shard reads ceil(9 / 2) + 1 from the cursor's key on; shard 0 then the 3 it still owes
    expect(r.limits).toEqual([6, 6, 3]);
    expect(r.keys).toBe(6 + 6 + 3);
  });

  it('an even split needs nothing more', async () => {
    const r = await read([range(0, 60).filter((i) => i % 2 === 0), range(0, 60).filter((i) => i % 2 === 1)], 8, 8, 9);
    expect(r.ids).toEqual(range(10, 18));
    expect(r.limits).toEqual([6, 6]);
  });
});

describe('merged shards (the check-in list in 16 shards)', () => {
  it('each reads ceil(21 / 16) + 1 keys first; a dry shard asks for what the page still lacks', async () => {
    // shard 0 holds positions 0, 1, 18, 19, 20 and later ones; 2..17 are spread over the other 15
    const order = Array.from({ length: 16 }, (_, n) =>
      n === 0 ? [0, 1, ...range(18, 21), ...range(100, 120)] : range(2, 18).filter((i) => (i % 15) + 1 === n),
    );
    const r = await read(order, 21);
    expect(r.ids).toEqual(range(0, 21));
    // shard 0 runs dry at the 19th key of the page: 2 still owed (a fixed follow-up asked for 10)
    expect(r.limits).toEqual([...Array(16).fill(3), 2]);
    expect(r.keys).toBe(16 + 3 + 2); // exactly the page and one more
  });
});
