import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { sleep } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { keys } from '#shared/db/keys.ts';
import type { BaseRecord, Claim, EntityDef, Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import type { SideItem, SideKey } from '#shared/db/side-items.ts';

export const tableName = () => config.tableName;

/**
 * DynamoDB refuses a partition key over 2048 bytes (ValidationException). Such a key cannot name a stored
 * item, so a read with one (an over-long id in a path or a filter) finds nothing instead of failing the request.
 */
const MAX_PARTITION_KEY_BYTES = 2048;
export const storable = (pk: string) => Buffer.byteLength(pk, 'utf8') <= MAX_PARTITION_KEY_BYTES;

export type Key = { PK: string; SK: string };

/**
 * BatchGetItem of any keys (100 per call, unprocessed keys retried); returns the items found, in no particular
 * order. Strongly consistent unless `consistent` is false: every read by key reflects every acknowledged write
 * (contract section 14); only index queries (lists, filters, counts, walks down the hierarchy) may lag.
 */
export async function batchGet(ctx: DataCtx, all: Key[], consistent = true): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  const wanted = all.filter((k) => storable(k.PK));
  for (let i = 0; i < wanted.length; i += 100) {
    let requestKeys: Record<string, unknown>[] = wanted.slice(i, i + 100);
    for (let attempt = 0; requestKeys.length > 0; attempt++) {
      const out = await ctx.db.send(
        new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: requestKeys, ConsistentRead: consistent } } }),
      );
      items.push(...(out.Responses?.[tableName()] ?? []));
      requestKeys = (out.UnprocessedKeys?.[tableName()]?.Keys as Record<string, unknown>[] | undefined) ?? [];
      if (requestKeys.length && attempt > 8) throw new Error('BatchGet: unprocessed keys after retries');
      if (requestKeys.length) await sleep(20 * 2 ** attempt);
    }
  }
  return items;
}

/** An entity a request will read first, named before the handler runs (read ahead with the caller's user). */
export interface EntityRef {
  type: string;
  id: string;
}

const readAheadKey = (k: Key) => `${k.PK}\u0000${k.SK}`;

/**
 * One BatchGetItem of `refs`: the items found by key, null where none is. Strongly consistent, as every read by
 * id (contract section 14: a GET by uuid reflects the caller's acknowledged write, and refuses a goal made
 * limited at once; the caller's own user too). Put on a DataCtx as `readAhead`, later getEntity calls of those
 * keys that need no fresher read answer from it.
 */
export async function readEntitiesAhead(ctx: DataCtx, refs: EntityRef[]): Promise<Map<string, Record<string, unknown> | null>> {
  const wanted = refs.map((r) => keys.entity(ctx.tenantId, r.type, r.id)).filter((k) => storable(k.PK));
  const found = new Map<string, Record<string, unknown> | null>(wanted.map((k) => [readAheadKey(k), null]));
  for (const item of await batchGet(ctx, wanted, true)) found.set(readAheadKey({ PK: item.PK as string, SK: item.SK as string }), item);
  return found;
}

/**
 * One entity by id, always strongly consistent (contract section 14: reads by id reflect every acknowledged
 * write; an eventually consistent GetItem may answer a version up to a second old in AWS). `fresh`: read it
 * now, not from the request's read-ahead (a write's read, again on every attempt).
 */
export async function getEntity<R extends BaseRecord>(
  ctx: DataCtx,
  def: EntityDef<R>,
  id: string,
  fresh = false,
): Promise<Stored<R> | undefined> {
  const key = keys.entity(ctx.tenantId, def.type, id);
  if (!storable(key.PK)) return undefined;
  const ahead = fresh ? undefined : ctx.readAhead?.get(readAheadKey(key));
  if (ahead !== undefined) return ahead ? { record: ahead.rec as R, version: ahead.v as number } : undefined;
  const out = await ctx.db.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  if (!out.Item) return undefined;
  return { record: out.Item.rec as R, version: out.Item.v as number };
}

/** Fetches many entities by id (BatchGetItem, 100 per call, strongly consistent as every read by key). Missing ids are absent from the map. */
export async function getEntities<R extends BaseRecord>(
  ctx: DataCtx,
  def: EntityDef<R>,
  ids: Iterable<string>,
  consistent = true,
): Promise<Map<string, Stored<R>>> {
  const items = await batchGet(
    ctx,
    [...new Set(ids)].map((id) => keys.entity(ctx.tenantId, def.type, id)),
    consistent,
  );
  return new Map(items.map((item) => [item.id as string, { record: item.rec as R, version: item.v as number }]));
}

/** The id holding a uniqueness claim, if any. */
export async function findUnique(ctx: DataCtx, name: string, value: string, consistent = true): Promise<string | undefined> {
  return (await findUniques(ctx, name, [value], consistent)).get(value);
}

/** The ids holding the uniqueness claims (name, value) for many values, in one BatchGetItem per 100: value → id, unclaimed values absent. */
export async function findUniques(ctx: DataCtx, name: string, values: Iterable<string>, consistent = true): Promise<Map<string, string>> {
  return new Map([...(await findClaims(ctx, name, values, consistent))].map(([value, claim]) => [value, claim.id]));
}

/** The uniqueness claims (name, value) for many values with what they carry (UniqueDef.data), one BatchGetItem per 100: value → claim, unclaimed values absent. */
export async function findClaims(ctx: DataCtx, name: string, values: Iterable<string>, consistent = true): Promise<Map<string, Claim>> {
  const unique = [...new Set(values)];
  const byPk = new Map(unique.map((v) => [keys.unique(ctx.tenantId, name, v).PK, v]));
  const items = await batchGet(
    ctx,
    unique.map((v) => keys.unique(ctx.tenantId, name, v)),
    consistent,
  );
  return new Map(items.map((item) => [byPk.get(item.PK as string)!, claimOf(item)]));
}

const claimOf = (item: Record<string, unknown>): Claim => ({
  id: item.id as string,
  ...(item.data ? { data: item.data as Record<string, unknown> } : {}),
});

/**
 * A command's read plan: entities of several types and uniqueness claims, fetched together in one
 * BatchGetItem round (100 keys a call). Name what to read, `run` once, then take each part's answer.
 */
export class BatchRead {
  private wanted: Key[] = [];
  private found = new Map<string, Record<string, unknown>>();

  constructor(private readonly ctx: DataCtx) {}

  /** Entities of one type by id: after `run`, the ones found (missing ids absent). */
  entities<R extends BaseRecord>(def: EntityDef<R>, ids: Iterable<string>): () => Map<string, Stored<R>> {
    const planned = [...new Set(ids)].map((id) => [id, keys.entity(this.ctx.tenantId, def.type, id)] as const);
    this.wanted.push(...planned.map(([, k]) => k));
    return () => {
      const out = new Map<string, Stored<R>>();
      for (const [id, k] of planned) {
        const item = this.found.get(`${k.PK}|${k.SK}`);
        if (item) out.set(id, { record: item.rec as R, version: item.v as number });
      }
      return out;
    };
  }

  /** The uniqueness claims (name, value) with what they carry (UniqueDef.data): after `run`, value → claim, unclaimed values absent. */
  claims(name: string, values: Iterable<string>): () => Map<string, Claim> {
    const planned = [...new Set(values)].map((v) => [v, keys.unique(this.ctx.tenantId, name, v)] as const);
    this.wanted.push(...planned.map(([, k]) => k));
    return () => {
      const out = new Map<string, Claim>();
      for (const [v, k] of planned) {
        const item = this.found.get(`${k.PK}|${k.SK}`);
        if (item) out.set(v, claimOf(item));
      }
      return out;
    };
  }

  /** A side item by key: after `run`, the item or undefined. */
  side(key: SideKey): () => SideItem | undefined {
    this.wanted.push(key);
    return () => this.found.get(`${key.PK}|${key.SK}`);
  }

  /** Reads everything named so far (strongly consistent, as every read by key: versions a transaction will check). */
  async run(consistent = true): Promise<this> {
    const unique = new Map(this.wanted.map((k) => [`${k.PK}|${k.SK}`, k]));
    for (const item of await batchGet(this.ctx, [...unique.values()], consistent))
      this.found.set(`${item.PK as string}|${item.SK as string}`, item);
    return this;
  }
}
