import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { entryListPartition, type EntryList } from '#shared/db/entry-lists.ts';
import type { ListEntry } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { storable, tableName } from '#shared/db/reads.ts';

export interface ListPage {
  entries: ListEntry[];
  lastKey?: Record<string, unknown>;
}

/**
 * One page of a GSI1 list (entity list or entry list), in creation order. `from`: the first sort key to read,
 * inclusive (`forward: false` reads from it downwards).
 */
export async function queryList(
  ctx: DataCtx,
  partition: string,
  opts: { forward?: boolean; startKey?: Record<string, unknown>; limit?: number; from?: string } = {},
): Promise<ListPage> {
  if (!storable(partition)) return { entries: [] };
  const forward = opts.forward ?? true;
  const out = await ctx.db.send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'GSI1',
      KeyConditionExpression: opts.from === undefined ? 'GSI1PK = :pk' : `GSI1PK = :pk AND GSI1SK ${forward ? '>=' : '<='} :from`,
      ExpressionAttributeValues: { ':pk': partition, ...(opts.from === undefined ? {} : { ':from': opts.from }) },
      ScanIndexForward: forward,
      ExclusiveStartKey: opts.startKey,
      Limit: opts.limit,
    }),
  );
  const entries = (out.Items ?? []).map((i) => ({
    id: i.id as string,
    sortKey: i.GSI1SK as string,
    vis: i.vis as string | undefined,
    acl: i.acl as string[] | undefined,
    state: i.state as string | undefined,
  }));
  return { entries, lastKey: out.LastEvaluatedKey };
}

/**
 * Every entry of a GSI1 partition, following pages (creation order). `pageSize` bounds each Query, for a
 * caller that may stop early (a page without it reads up to 1 MB of keys).
 */
export async function* partitionEntries(ctx: DataCtx, partition: string, opts: { pageSize?: number } = {}): AsyncGenerator<ListEntry> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await queryList(ctx, partition, { startKey, limit: opts.pageSize });
    yield* page.entries;
    startKey = page.lastKey;
  } while (startKey);
}

/** Every entry of one value of a declared entry list (creation order): `entriesOf(ctx, membersOfTeam, teamUuid)`. */
export const entriesOf = (ctx: DataCtx, of: EntryList, value: string, opts: { pageSize?: number } = {}) =>
  partitionEntries(ctx, entryListPartition(ctx.tenantId, of, value), opts);

/** The GSI1 partition of one value of a declared entry list (for the list engine's paging). */
export const entryPartitionOf = (ctx: DataCtx, of: EntryList, value: string) => entryListPartition(ctx.tenantId, of, value);
