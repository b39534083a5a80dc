import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { batchGet, storable, tableName } from '#shared/db/reads.ts';

// Side items: misc keys such as order items, requester claims, request items.

/** A side item's key: built by the entity that owns it (keys.misc), never by hand. */
export type SideKey = { PK: string; SK: string };
/** A side item as stored, without its key attributes. */
export type SideItem = Record<string, unknown>;

const KEY_ATTRS = new Set(['PK', 'SK']);
const withoutKeys = (item: Record<string, unknown>): SideItem =>
  Object.fromEntries(Object.entries(item).filter(([k]) => !KEY_ATTRS.has(k)));

/** One side item (strongly consistent by default: side items carry claims and throttles). */
export async function getSide(ctx: DataCtx, key: SideKey, consistent = true): Promise<SideItem | undefined> {
  if (!storable(key.PK)) return undefined;
  const out = await ctx.db.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: consistent }));
  return out.Item ? withoutKeys(out.Item) : undefined;
}

/** Many side items by key (BatchGetItem, 100 per call, the calls in parallel); absent keys are absent from the map, keyed `PK SK`. */
export async function getSides(ctx: DataCtx, sideKeys: SideKey[], consistent = false): Promise<Map<string, SideItem>> {
  const chunks: SideKey[][] = [];
  for (let i = 0; i < sideKeys.length; i += 100) chunks.push(sideKeys.slice(i, i + 100));
  const found = (await Promise.all(chunks.map((c) => batchGet(ctx, c, consistent)))).flat();
  return new Map(found.map((i) => [`${i.PK as string} ${i.SK as string}`, withoutKeys(i)]));
}

/** Side items of one base-table partition in sort-key order (`forward: false`: newest first), with their SK. */
export async function querySide(
  ctx: DataCtx,
  partitionKey: string,
  opts: { forward?: boolean; limit?: number; consistent?: boolean } = {},
): Promise<Array<SideItem & { SK: string }>> {
  if (!storable(partitionKey)) return [];
  const out = await ctx.db.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': partitionKey },
      ScanIndexForward: opts.forward ?? true,
      ConsistentRead: opts.consistent ?? true,
      Limit: opts.limit,
    }),
  );
  return (out.Items ?? []).map((i) => ({ ...withoutKeys(i), SK: i.SK as string }));
}

/**
 * One page of the side items of a partition whose sort key starts with `prefix` (history items beside a
 * goal, chunk items of an import; '' for every item), in sort-key order; `lastKey` continues. For partitions
 * that also hold other families, and for ones larger than one Query page.
 */
export async function querySidePage(
  ctx: DataCtx,
  partitionKey: string,
  opts: { prefix: string; forward?: boolean; limit?: number; consistent?: boolean; startKey?: Record<string, unknown> },
): Promise<{ items: Array<SideItem & { SK: string }>; lastKey?: Record<string, unknown> }> {
  if (!storable(partitionKey)) return { items: [] };
  const out = await ctx.db.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: opts.prefix ? 'PK = :pk AND begins_with(SK, :prefix)' : 'PK = :pk',
      ExpressionAttributeValues: { ':pk': partitionKey, ...(opts.prefix ? { ':prefix': opts.prefix } : {}) },
      ScanIndexForward: opts.forward ?? true,
      ConsistentRead: opts.consistent ?? false,
      Limit: opts.limit,
      ExclusiveStartKey: opts.startKey,
    }),
  );
  return { items: (out.Items ?? []).map((i) => ({ ...withoutKeys(i), SK: i.SK as string })), lastKey: out.LastEvaluatedKey };
}

/**
 * Side items of one partition whose sort key lies in [`from`, `to`] and, with `after`, beyond `after` (which must
 * itself lie in the range: it is the query's exclusive start), in sort-key order, at most `limit`. For partitions
 * read by position (the event feed): a Query reads only the items it returns.
 */
export async function querySideRange(
  ctx: DataCtx,
  partitionKey: string,
  opts: { from: string; to: string; after?: string; limit: number; consistent?: boolean },
): Promise<Array<SideItem & { SK: string }>> {
  if (!storable(partitionKey) || opts.from > opts.to || (opts.after !== undefined && (opts.after < opts.from || opts.after >= opts.to)))
    return [];
  const out = await ctx.db.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': partitionKey, ':from': opts.from, ':to': opts.to },
      ConsistentRead: opts.consistent ?? false,
      Limit: opts.limit,
      ...(opts.after !== undefined ? { ExclusiveStartKey: { PK: partitionKey, SK: opts.after } } : {}),
    }),
  );
  return (out.Items ?? []).map((i) => ({ ...withoutKeys(i), SK: i.SK as string }));
}
