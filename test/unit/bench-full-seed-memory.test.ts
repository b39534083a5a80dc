import { describe, expect, it } from 'vitest';
import { BatchGetCommand, GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { partitionEntries } from '#shared/db/index-queries.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { querySide, querySidePage } from '#shared/db/side-items.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { MemoryTable } from '../../scripts/lib/bench-full-seed-memory.ts';

/** The in-process table of the full bench's straight seed answers the store's calls as DynamoDB does. */
const T = 'bench';
const setup = () => {
  const mem = new MemoryTable(T);
  return { mem, ctx: { tenantId: 't1', db: mem.db } as DataCtx };
};
const put = (mem: MemoryTable, items: Record<string, unknown>[]) =>
  mem.db.send(new TransactWriteCommand({ TransactItems: items.map((Item) => ({ Put: { TableName: T, Item } })) }));

describe('MemoryTable (bench full seed)', () => {
  it('stores what the document client stores (no undefined values) and returns copies', async () => {
    const { mem } = setup();
    await put(mem, [{ PK: 'a', SK: '#', rec: { x: 1, gone: undefined, list: [1, undefined, 2] }, acl: undefined }]);
    const got = (await mem.db.send(new GetCommand({ TableName: T, Key: { PK: 'a', SK: '#' } }))).Item!;
    expect(got).toEqual({ PK: 'a', SK: '#', rec: { x: 1, list: [1, 2] } });
    (got.rec as { x: number }).x = 99;
    expect(mem.get({ PK: 'a', SK: '#' })!.rec).toEqual({ x: 1, list: [1, 2] });
    const batch = await mem.db.send(
      new BatchGetCommand({
        RequestItems: {
          [T]: {
            Keys: [
              { PK: 'a', SK: '#' },
              { PK: 'missing', SK: '#' },
            ],
          },
        },
      }),
    );
    expect(batch.Responses![T]).toHaveLength(1);
  });

  it('queries a partition in sort-key order, both ways, by prefix, with limits and pages', async () => {
    const { mem, ctx } = setup();
    await put(
      mem,
      ['H#3', 'H#1', 'IX#a', 'H#2', '#'].map((SK) => ({ PK: 'p', SK, n: SK })),
    );
    expect((await querySide(ctx, 'p')).map((i) => i.SK)).toEqual(['#', 'H#1', 'H#2', 'H#3', 'IX#a']);
    expect((await querySide(ctx, 'p', { forward: false, limit: 2 })).map((i) => i.SK)).toEqual(['IX#a', 'H#3']);
    const first = await querySidePage(ctx, 'p', { prefix: 'H#', limit: 2 });
    expect(first.items.map((i) => i.SK)).toEqual(['H#1', 'H#2']);
    const second = await querySidePage(ctx, 'p', { prefix: 'H#', limit: 2, startKey: first.lastKey });
    expect(second.items.map((i) => i.SK)).toEqual(['H#3']);
    expect(second.lastKey).toBeUndefined();
    const between = await mem.db.send(
      new QueryCommand({
        TableName: T,
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :a AND :b',
        ExpressionAttributeValues: { ':pk': 'p', ':a': 'H#2', ':b': 'H#9' },
      }),
    );
    expect(between.Items!.map((i) => i.SK)).toEqual(['H#2', 'H#3']);
  });

  it('keeps GSI1 in index order with only its projected attributes, following moves and deletes', async () => {
    const { mem, ctx } = setup();
    await put(mem, [
      { PK: 'x1', SK: '#', GSI1PK: 'list', GSI1SK: '2', id: 'x1', secret: 's' },
      { PK: 'x2', SK: '#', GSI1PK: 'list', GSI1SK: '1', id: 'x2' },
      { PK: 'x3', SK: '#', GSI1PK: 'other', GSI1SK: '0', id: 'x3' },
    ]);
    const ids = async () => {
      const out: string[] = [];
      for await (const e of partitionEntries(ctx, 'list', { pageSize: 1 })) out.push(e.id);
      return out;
    };
    expect(await ids()).toEqual(['x2', 'x1']);
    const raw = await mem.db.send(
      new QueryCommand({
        TableName: T,
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: { ':pk': 'list' },
      }),
    );
    expect(raw.Items![1]).toEqual({ PK: 'x1', SK: '#', GSI1PK: 'list', GSI1SK: '2', id: 'x1' });
    await put(mem, [{ PK: 'x3', SK: '#', GSI1PK: 'list', GSI1SK: '3', id: 'x3' }]); // moved into the list
    await mem.db.send(new TransactWriteCommand({ TransactItems: [{ Delete: { TableName: T, Key: { PK: 'x2', SK: '#' } } }] }));
    expect(await ids()).toEqual(['x1', 'x3']);
  });

  it('applies the update expressions the store builds (SET, arithmetic, if_not_exists, REMOVE, ADD)', async () => {
    const { mem } = setup();
    await put(mem, [{ PK: 'c', SK: '#', v: 1, n: 5, gone: 'x' }]);
    await mem.db.send(
      new UpdateCommand({
        TableName: T,
        Key: { PK: 'c', SK: '#' },
        UpdateExpression: 'REMOVE gone SET v = :next, #a0 = #a0 - :v1, #a2 = if_not_exists(#a2, :zero) + :v1 ADD #a3 :v1',
        ExpressionAttributeNames: { '#a0': 'n', '#a2': 'm', '#a3': 'count' },
        ExpressionAttributeValues: { ':next': 2, ':v1': 3, ':zero': 10 },
      }),
    );
    expect(mem.get({ PK: 'c', SK: '#' })).toEqual({ PK: 'c', SK: '#', v: 2, n: 2, m: 13, count: 3 });
  });

  it('runs a WriteTx and records each committed write as a change, in order, with both images', async () => {
    const { mem, ctx } = setup();
    const def = { type: 'thing' };
    const rec = { uuid: 'u1', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' };
    await new WriteTx(ctx).create(def, rec).commit();
    const stored = (await getEntity(ctx, def, 'u1', true))!;
    await new WriteTx(ctx).replace(def, stored, { ...rec, updated_at: 'later' }).commit();
    const changes = mem.takeChanges();
    expect(changes.map((c) => c.eventName)).toEqual(['INSERT', 'MODIFY']);
    expect(changes[1]!.oldImage!.v).toBe(1);
    expect(changes[1]!.newImage!.v).toBe(2);
    expect(mem.takeChanges()).toEqual([]);
    expect(mem.takeDirty().map((d) => d.key)).toEqual([{ PK: 'T#t1#thing#u1', SK: '#' }]);
  });

  it('evicts written items, but not one written again since', async () => {
    const { mem } = setup();
    await put(mem, [
      { PK: 'e', SK: '1', n: 1 },
      { PK: 'e', SK: '2', n: 1 },
    ]);
    const written = mem.takeDirty().map((d) => d.key);
    await put(mem, [{ PK: 'e', SK: '2', n: 2 }]);
    mem.evict(written, () => true);
    expect(mem.get({ PK: 'e', SK: '1' })).toBeUndefined();
    expect(mem.get({ PK: 'e', SK: '2' })).toMatchObject({ n: 2 });
    expect(mem.takeDirty()).toEqual([{ key: { PK: 'e', SK: '2' }, item: { PK: 'e', SK: '2', n: 2 } }]);
  });

  it('refuses what it does not implement, loudly', async () => {
    const { mem } = setup();
    await expect(
      mem.db.send(
        new QueryCommand({
          TableName: T,
          KeyConditionExpression: 'PK = :pk',
          FilterExpression: 'x = :x',
          ExpressionAttributeValues: { ':pk': 'p', ':x': 1 },
        }),
      ),
    ).rejects.toThrow(/FilterExpression/);
    await expect(
      mem.db.send(new QueryCommand({ TableName: T, KeyConditionExpression: 'SK = :pk', ExpressionAttributeValues: { ':pk': 'p' } })),
    ).rejects.toThrow(/not supported/);
  });
});
