import { BatchGetCommand, GetCommand, QueryCommand, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { TransactionCanceledException, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { config } from '#shared/config.ts';
import type { Db } from '#shared/db/client.ts';
import { keys, REFERENCE_SK_PREFIX } from '#shared/db/keys.ts';
import { AppError, ConcurrentUpdateError, MAX_TRANSACTION_ITEMS, TooManyWritesError } from '#shared/errors.ts';
import { entryListPartition, type EntryList } from '#shared/db/entry-lists.ts';
import { idsAreSeeded } from '#shared/ids.ts';
import { TABLE_DEFINITION } from '#shared/db/table.ts';

const TTL_ATTRIBUTE = TABLE_DEFINITION.ttlAttribute;

export { entryList, type EntryList } from '#shared/db/entry-lists.ts';

/** What every request-scoped data access needs: the caller's tenant and a client confined to it. */
export interface DataCtx {
  tenantId: string;
  db: Db;
  /** Items the request read ahead (readEntitiesAhead), by key; eventually consistent getEntity answers from it. */
  readAhead?: Map<string, Record<string, unknown> | null>;
}

export interface BaseRecord {
  uuid: string;
  created_at: string;
  updated_at: string;
}

/**
 * One association value of an entity, indexed so "entities whose <name> is <value>" is one Query. Built with
 * `entry(list, value)` from a declared EntryList (entry-lists.ts), so the writer and every reader name the
 * same constant.
 */
export interface EntryDef {
  name: string;
  value: string;
  /** List family the entry is indexed under; defaults to the entity's list name. */
  list?: string;
  /** A reference (EntryList.heldBy): the entity type `value` names. */
  heldBy?: string;
  /** The error when a new reference names an entity that does not exist (any more). */
  onMissing?: () => AppError;
}

/** The entry of `record` in a declared entry list; `onMissing` for a reference (heldBy) whose target is gone. */
export const entry = (of: EntryList, value: string, onMissing?: () => AppError): EntryDef => ({ list: of.list, name: of.name, value, ...(of.heldBy ? { heldBy: of.heldBy, onMissing } : {}) });

/** A uniqueness claim: at most one entity of the tenant may hold (name, value). */
export interface UniqueDef {
  name: string;
  value: string;
  /**
   * What the claim carries besides its holder's id, for a reader of the claim that would otherwise read the
   * holder (a label's name as spelled): written with the claim and rewritten whenever it changes, in the
   * holder's own transaction, so a strongly consistent read of the claim sees the holder's current value.
   */
  data?: Record<string, unknown>;
  /** Error raised when the claim is already held. */
  onTaken: () => AppError;
}

/** A uniqueness claim as read: its holder's id and what the claim carries (`data`, absent on claims written before it did). */
export interface Claim {
  id: string;
  data?: Record<string, unknown>;
}

/** Visibility envelope copied onto list-index items so list paging can skip invisible records without reading them. */
export interface Envelope {
  vis?: string;
  acl?: string[];
  /** Lifecycle marker (e.g. `discarded`, `archived`) so lists can leave such records out without reading them. */
  state?: string;
}

export interface EntityDef<R extends BaseRecord> {
  /** Key prefix of the entity item, e.g. `user`, `goal`. */
  type: string;
  /** List the entity appears in (GSI1PK); default `type`. Goals use their kind. */
  listName?(r: R): string;
  entries?(r: R): EntryDef[];
  uniques?(r: R): UniqueDef[];
  envelope?(r: R): Envelope;
  /**
   * When the table's TTL may remove the item (epoch seconds), for records kept only for a while (finished runs,
   * delivery logs). Only for entities whose entries and claims are gone by then: TTL removes the item alone.
   */
  expiresAt?(r: R): number | undefined;
}

const expiryOf = <R extends BaseRecord>(def: EntityDef<R>, r: R) => {
  const at = def.expiresAt?.(r);
  return at === undefined ? {} : { [TTL_ATTRIBUTE]: at };
};

export interface Stored<R> {
  record: R;
  version: number;
}

/**
 * A create found its record already stored under an id seeded by the request's Idempotency-Key (shared/ids.ts):
 * an earlier attempt of this very request committed and died before its answer was recorded. The command
 * answers with the stored record instead of writing a second one (`createdOrStored`).
 */
export class AlreadyCreatedError extends AppError {
  constructor(
    readonly type: string,
    readonly uuid: string,
  ) {
    super(409, 'conflict', 'The record this request creates is already stored');
  }
}

/** A row of GSI1: an entity or entry item seen through the list index. */
export interface ListEntry {
  id: string;
  sortKey: string;
  vis?: string;
  acl?: string[];
  state?: string;
}

const tableName = () => config.tableName;
const listNameOf = <R extends BaseRecord>(def: EntityDef<R>, r: R) => def.listName?.(r) ?? def.type;

// ---------- reads ----------

/**
 * DynamoDB refuses a partition key over 2048 bytes (ValidationException). Such a key cannot name a stored
 * item, so a read with one (an over-long id in a path or a filter) finds nothing instead of failing the request.
 */
const MAX_PARTITION_KEY_BYTES = 2048;
const storable = (pk: string) => Buffer.byteLength(pk, 'utf8') <= MAX_PARTITION_KEY_BYTES;

type Key = { PK: string; SK: string };

/** BatchGetItem of any keys (100 per call, unprocessed keys retried); returns the items found, in no particular order. */
async function batchGet(ctx: DataCtx, all: Key[], consistent = false): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  const wanted = all.filter((k) => storable(k.PK));
  for (let i = 0; i < wanted.length; i += 100) {
    let requestKeys: Record<string, unknown>[] = wanted.slice(i, i + 100);
    for (let attempt = 0; requestKeys.length > 0; attempt++) {
      const out = await ctx.db.send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: requestKeys, ConsistentRead: consistent } } }));
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
 * One BatchGetItem (eventually consistent) of `refs`: the items found by key, null where none is.
 * Put on a DataCtx as `readAhead`, later eventually consistent getEntity calls of those keys answer from it.
 */
export async function readEntitiesAhead(ctx: DataCtx, refs: EntityRef[]): Promise<Map<string, Record<string, unknown> | null>> {
  const wanted = refs.map((r) => keys.entity(ctx.tenantId, r.type, r.id)).filter((k) => storable(k.PK));
  const found = new Map<string, Record<string, unknown> | null>(wanted.map((k) => [readAheadKey(k), null]));
  for (const item of await batchGet(ctx, wanted)) found.set(readAheadKey({ PK: item.PK as string, SK: item.SK as string }), item);
  return found;
}

export async function getEntity<R extends BaseRecord>(ctx: DataCtx, def: EntityDef<R>, id: string, consistent = false): Promise<Stored<R> | undefined> {
  const key = keys.entity(ctx.tenantId, def.type, id);
  if (!storable(key.PK)) return undefined;
  const ahead = consistent ? undefined : ctx.readAhead?.get(readAheadKey(key));
  if (ahead !== undefined) return ahead ? { record: ahead.rec as R, version: ahead.v as number } : undefined;
  const out = await ctx.db.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: consistent }));
  if (!out.Item) return undefined;
  return { record: out.Item.rec as R, version: out.Item.v as number };
}

/** Fetches many entities by id (BatchGetItem, 100 per call; `consistent` for strongly consistent reads). Missing ids are absent from the map. */
export async function getEntities<R extends BaseRecord>(ctx: DataCtx, def: EntityDef<R>, ids: Iterable<string>, consistent = false): Promise<Map<string, Stored<R>>> {
  const items = await batchGet(ctx, [...new Set(ids)].map((id) => keys.entity(ctx.tenantId, def.type, id)), consistent);
  return new Map(items.map((item) => [item.id as string, { record: item.rec as R, version: item.v as number }]));
}

/** The id holding a uniqueness claim, if any. */
export async function findUnique(ctx: DataCtx, name: string, value: string, consistent = false): Promise<string | undefined> {
  return (await findUniques(ctx, name, [value], consistent)).get(value);
}

/** The ids holding the uniqueness claims (name, value) for many values, in one BatchGetItem per 100: value → id, unclaimed values absent. */
export async function findUniques(ctx: DataCtx, name: string, values: Iterable<string>, consistent = false): Promise<Map<string, string>> {
  const unique = [...new Set(values)];
  const byPk = new Map(unique.map((v) => [keys.unique(ctx.tenantId, name, v).PK, v]));
  const items = await batchGet(ctx, unique.map((v) => keys.unique(ctx.tenantId, name, v)), consistent);
  return new Map(items.map((item) => [byPk.get(item.PK as string)!, item.id as string]));
}

/** The uniqueness claims (name, value) for many values with what they carry (UniqueDef.data), one BatchGetItem per 100: value → claim, unclaimed values absent. */
export async function findClaims(ctx: DataCtx, name: string, values: Iterable<string>, consistent = false): Promise<Map<string, Claim>> {
  const unique = [...new Set(values)];
  const byPk = new Map(unique.map((v) => [keys.unique(ctx.tenantId, name, v).PK, v]));
  const items = await batchGet(ctx, unique.map((v) => keys.unique(ctx.tenantId, name, v)), consistent);
  return new Map(items.map((item) => [byPk.get(item.PK as string)!, claimOf(item)]));
}

const claimOf = (item: Record<string, unknown>): Claim => ({ id: item.id as string, ...(item.data ? { data: item.data as Record<string, unknown> } : {}) });

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

  /** Reads everything named so far (strongly consistent with `consistent`: versions a transaction will check). */
  async run(consistent = false): Promise<this> {
    const unique = new Map(this.wanted.map((k) => [`${k.PK}|${k.SK}`, k]));
    for (const item of await batchGet(this.ctx, [...unique.values()], consistent)) this.found.set(`${item.PK as string}|${item.SK as string}`, item);
    return this;
  }
}

export interface ListPage {
  entries: ListEntry[];
  lastKey?: Record<string, unknown>;
}

/**
 * One page of a GSI1 list (entity list or entry list), in creation order. `from`: the first sort key to read,
 * inclusive (`forward: false` reads from it downwards).
 */
export async function queryList(ctx: DataCtx, partition: string, opts: { forward?: boolean; startKey?: Record<string, unknown>; limit?: number; from?: string } = {}): Promise<ListPage> {
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
  const entries = (out.Items ?? []).map((i) => ({ id: i.id as string, sortKey: i.GSI1SK as string, vis: i.vis as string | undefined, acl: i.acl as string[] | undefined, state: i.state as string | undefined }));
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
export const entriesOf = (ctx: DataCtx, of: EntryList, value: string, opts: { pageSize?: number } = {}) => partitionEntries(ctx, entryListPartition(ctx.tenantId, of, value), opts);

/** The GSI1 partition of one value of a declared entry list (for the list engine's paging). */
export const entryPartitionOf = (ctx: DataCtx, of: EntryList, value: string) => entryListPartition(ctx.tenantId, of, value);

/** The list row of a record as its entity writes it (id, creation-order sort key, envelope): for lists assembled in memory. */
export const listEntryOf = <R extends BaseRecord>(def: EntityDef<R>, r: R): ListEntry => ({ id: r.uuid, sortKey: keys.listSortKey(r.created_at, r.uuid), ...(def.envelope?.(r) ?? {}) });

// ---------- side items (misc keys: order items, requester claims, request items) ----------

/** A side item's key: built by the entity that owns it (keys.misc), never by hand. */
export type SideKey = { PK: string; SK: string };
/** A side item as stored, without its key attributes. */
export type SideItem = Record<string, unknown>;

const KEY_ATTRS = new Set(['PK', 'SK']);
const withoutKeys = (item: Record<string, unknown>): SideItem => Object.fromEntries(Object.entries(item).filter(([k]) => !KEY_ATTRS.has(k)));

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
export async function querySide(ctx: DataCtx, partitionKey: string, opts: { forward?: boolean; limit?: number; consistent?: boolean } = {}): Promise<Array<SideItem & { SK: string }>> {
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
 * A condition on one item, all parts ANDed: `exists` (the item is there / is not), attributes equal to
 * values, attributes at most a value. Values are passed as expression values, never spliced into text.
 */
export interface ItemCondition {
  exists?: boolean;
  equals?: Record<string, unknown>;
  atMost?: Record<string, string | number>;
}

/** Builds a condition (and update) expression with generated placeholders. */
class Expr {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private n = 0;
  name(attr: string) {
    const k = `#a${this.n++}`;
    this.names[k] = attr;
    return k;
  }
  value(v: unknown) {
    const k = `:v${this.n++}`;
    this.values[k] = v;
    return k;
  }
  condition(c: ItemCondition | undefined): string | undefined {
    if (!c) return undefined;
    const parts: string[] = [];
    if (c.exists !== undefined) parts.push(c.exists ? 'attribute_exists(PK)' : 'attribute_not_exists(PK)');
    for (const [a, v] of Object.entries(c.equals ?? {})) parts.push(`${this.name(a)} = ${this.value(v)}`);
    for (const [a, v] of Object.entries(c.atMost ?? {})) parts.push(`${this.name(a)} <= ${this.value(v)}`);
    return parts.length ? parts.join(' AND ') : undefined;
  }
  /** Spreads the names/values into a command input (omitted when empty: DynamoDB refuses empty maps). */
  attrs() {
    return {
      ...(Object.keys(this.names).length ? { ExpressionAttributeNames: this.names } : {}),
      ...(Object.keys(this.values).length ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}

// ---------- writes ----------

type TxItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * Collects the writes of one logical change and commits them atomically (TransactWriteItems), mapping a
 * failed condition back to the typed error of the operation that carried it. Nothing is written unless
 * everything is.
 */
export class WriteTx {
  private items: TxItem[] = [];
  private failures: Array<(reason: { Item?: unknown }) => AppError> = [];
  private tooMany: { field?: string; hint?: string } = {};
  private alive = new Set<string>();

  constructor(private readonly ctx: DataCtx) {}

  get size(): number {
    return this.items.length;
  }

  /** Adds a raw operation (Put/Update/Delete/ConditionCheck) with the error its failed condition means. Store-internal: callers use the typed operations. */
  private add(item: TxItem, onConditionFail: (reason: { Item?: unknown }) => AppError = () => new ConcurrentUpdateError()): this {
    this.items.push(item);
    this.failures.push(onConditionFail);
    return this;
  }

  create<R extends BaseRecord>(def: EntityDef<R>, record: R): this {
    const env = def.envelope?.(record) ?? {};
    // Under a seeded id the record can only be there because an earlier attempt of this request stored it.
    const seeded = idsAreSeeded();
    this.add(
      {
        Put: {
          TableName: tableName(),
          Item: { ...keys.entity(this.ctx.tenantId, def.type, record.uuid), ...this.listKeys(listNameOf(def, record), record), id: record.uuid, kind: def.type, v: 1, rec: record, ...env, ...expiryOf(def, record) },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      () => (seeded ? new AlreadyCreatedError(def.type, record.uuid) : new ConcurrentUpdateError()),
    );
    for (const e of def.entries?.(record) ?? []) {
      this.putEntry(def, record, e, env);
      if (e.heldBy) this.checkAlive(e.heldBy, e.value, e.onMissing ?? (() => new ConcurrentUpdateError()));
    }
    for (const u of def.uniques?.(record) ?? []) this.claim(u, record.uuid);
    return this;
  }

  /** Replaces an entity read at `before.version`; fails with ConcurrentUpdateError if it changed since. */
  replace<R extends BaseRecord>(def: EntityDef<R>, before: Stored<R>, after: R): this {
    const envBefore = def.envelope?.(before.record) ?? {};
    const env = def.envelope?.(after) ?? {};
    const envChanged = JSON.stringify(envBefore) !== JSON.stringify(env);
    this.add({
      Put: {
        TableName: tableName(),
        Item: { ...keys.entity(this.ctx.tenantId, def.type, after.uuid), ...this.listKeys(listNameOf(def, after), after), id: after.uuid, kind: def.type, v: before.version + 1, rec: after, ...env, ...expiryOf(def, after) },
        ConditionExpression: 'v = :v',
        ExpressionAttributeValues: { ':v': before.version },
      },
    });
    const oldEntries = new Map((def.entries?.(before.record) ?? []).map((e) => [entryId(def, before.record, e), e]));
    const newEntries = new Map((def.entries?.(after) ?? []).map((e) => [entryId(def, after, e), e]));
    for (const [k, e] of oldEntries) if (!newEntries.has(k)) this.deleteEntry(def, before.record, e);
    for (const [k, e] of newEntries) {
      if (envChanged || !oldEntries.has(k)) this.putEntry(def, after, e, env);
      if (e.heldBy && !oldEntries.has(k)) this.checkAlive(e.heldBy, e.value, e.onMissing ?? (() => new ConcurrentUpdateError()));
    }
    const oldUniques = new Map((def.uniques?.(before.record) ?? []).map((u) => [`${u.name}#${u.value}`, u]));
    const newUniques = new Map((def.uniques?.(after) ?? []).map((u) => [`${u.name}#${u.value}`, u]));
    for (const [k, u] of oldUniques) if (!newUniques.has(k)) this.release(u, before.record.uuid);
    for (const [k, u] of newUniques) {
      // a claim kept is rewritten when what it carries changed (a label renamed to another spelling of its name)
      const old = oldUniques.get(k);
      if (!old || JSON.stringify(old.data ?? null) !== JSON.stringify(u.data ?? null)) this.claim(u, after.uuid);
    }
    return this;
  }

  /** Hard-deletes an entity with its entries and uniqueness claims. */
  remove<R extends BaseRecord>(def: EntityDef<R>, before: Stored<R>): this {
    this.add({
      Delete: { TableName: tableName(), Key: keys.entity(this.ctx.tenantId, def.type, before.record.uuid), ConditionExpression: 'v = :v', ExpressionAttributeValues: { ':v': before.version } },
    });
    for (const e of def.entries?.(before.record) ?? []) this.deleteEntry(def, before.record, e);
    for (const u of def.uniques?.(before.record) ?? []) this.release(u, before.record.uuid);
    return this;
  }

  /** The entity exists (not deleted) when the transaction commits; else `onFail` (e.g. a 422 naming the field). */
  checkExists<R extends BaseRecord>(def: EntityDef<R>, id: string, onFail: () => AppError): this {
    return this.add({ ConditionCheck: { TableName: tableName(), Key: keys.entity(this.ctx.tenantId, def.type, id), ConditionExpression: 'attribute_exists(PK)' } }, onFail);
  }

  /**
   * The entity exists and no delete of it is under way (removeUnreferenced's marker, unless stale) when the
   * transaction commits. Gone: `onMissing`; being deleted: ConcurrentUpdateError, so the write retries and
   * then sees either the entity deleted or the delete refused.
   */
  checkAlive(type: string, id: string, onMissing: () => AppError): this {
    // one check per entity: a transaction may not name an item twice (e.g. a batch of goals in one period)
    const key = `${type}#${id}`;
    if (this.alive.has(key)) return this;
    this.alive.add(key);
    return this.add(
      {
        ConditionCheck: {
          TableName: tableName(),
          Key: keys.entity(this.ctx.tenantId, type, id),
          ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(deleting_at) OR deleting_at < :stale)',
          ExpressionAttributeValues: { ':stale': new Date(Date.now() - DELETE_MARKER_TTL_MS).toISOString() },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      (reason) => (reason.Item ? new ConcurrentUpdateError() : onMissing()),
    );
  }

  /**
   * Writes an entity's uniqueness claims again as its def declares them now (with what they carry, `data`),
   * conditioned on the entity holding them and on the entity being at the version read: a backfill for claims
   * written before they carried `data` (a rename or any change in between makes it retry).
   */
  reclaim<R extends BaseRecord>(def: EntityDef<R>, read: Stored<R>): this {
    this.checkVersion(def, read);
    for (const u of def.uniques?.(read.record) ?? []) this.claim(u, read.record.uuid);
    return this;
  }

  /** The entity is still at the version read when the transaction commits (else a retry: ConcurrentUpdateError). */
  checkVersion<R extends BaseRecord>(def: EntityDef<R>, read: Stored<R>, onFail: () => AppError = () => new ConcurrentUpdateError()): this {
    return this.add(
      { ConditionCheck: { TableName: tableName(), Key: keys.entity(this.ctx.tenantId, def.type, read.record.uuid), ConditionExpression: 'v = :v', ExpressionAttributeValues: { ':v': read.version } } },
      onFail,
    );
  }

  /**
   * Bumps an entity's version without changing its record (a "touch"): every transaction that checks or
   * writes the entity at the version it read then conflicts with this one. References use it: a goal write
   * touches the period and teams it names, their delete is conditioned on the version it read (data-model.md).
   */
  touch<R extends BaseRecord>(def: EntityDef<R>, read: Stored<R>, onFail: () => AppError = () => new ConcurrentUpdateError()): this {
    return this.add(
      {
        Update: {
          TableName: tableName(),
          Key: keys.entity(this.ctx.tenantId, def.type, read.record.uuid),
          UpdateExpression: 'SET v = :next',
          ConditionExpression: 'v = :v',
          ExpressionAttributeValues: { ':v': read.version, ':next': read.version + 1 },
        },
      },
      onFail,
    );
  }

  /** Puts a side item (its key from the owning entity), optionally conditioned. */
  putSide(key: SideKey, attrs: SideItem, opts: { if?: ItemCondition; onFail?: () => AppError } = {}): this {
    const e = new Expr();
    const condition = e.condition(opts.if);
    return this.add({ Put: { TableName: tableName(), Item: { ...attrs, ...key }, ...(condition ? { ConditionExpression: condition, ...e.attrs() } : {}) } }, opts.onFail);
  }

  /** Deletes a side item (no condition: deleting an absent item is a no-op), or only if `opts.if` holds. */
  deleteSide(key: SideKey, opts: { if?: ItemCondition; onFail?: () => AppError } = {}): this {
    const e = new Expr();
    const condition = e.condition(opts.if);
    return this.add({ Delete: { TableName: tableName(), Key: key, ...(condition ? { ConditionExpression: condition, ...e.attrs() } : {}) } }, opts.onFail);
  }

  /** Adds to numeric attributes of a side item, creating the item and the attributes at 0 if absent (counters). */
  incrementSide(key: SideKey, add: Record<string, number>): this {
    const e = new Expr();
    const parts = Object.entries(add).map(([a, n]) => `${e.name(a)} ${e.value(n)}`);
    return this.add({ Update: { TableName: tableName(), Key: key, UpdateExpression: `ADD ${parts.join(', ')}`, ...e.attrs() } });
  }

  /** Sets attributes of a side item and adds to numeric ones (e.g. its version `v`), optionally conditioned. */
  updateSide(key: SideKey, change: { set: SideItem; add?: Record<string, number>; if?: ItemCondition }, onFail?: () => AppError): this {
    const e = new Expr();
    const sets = [
      ...Object.entries(change.set).map(([a, v]) => `${e.name(a)} = ${e.value(v)}`),
      ...Object.entries(change.add ?? {}).map(([a, n]) => {
        const name = e.name(a);
        return `${name} = ${name} + ${e.value(n)}`;
      }),
    ];
    const condition = e.condition(change.if);
    return this.add({ Update: { TableName: tableName(), Key: key, UpdateExpression: `SET ${sets.join(', ')}`, ...(condition ? { ConditionExpression: condition } : {}), ...e.attrs() } }, onFail);
  }

  /** The side item satisfies `condition` when the transaction commits. */
  checkSide(key: SideKey, condition: ItemCondition, onFail?: () => AppError): this {
    const e = new Expr();
    return this.add({ ConditionCheck: { TableName: tableName(), Key: key, ConditionExpression: e.condition(condition) ?? 'attribute_exists(PK) OR attribute_not_exists(PK)', ...e.attrs() } }, onFail);
  }

  /** The field a `too_many` refusal of this transaction names (what the client should send less of). */
  blame(field: string | undefined, hint?: string): this {
    this.tooMany = { field, hint };
    return this;
  }

  /** Refuses (422 too_many) now, before anything is written, when the transaction would not fit; `extra` items still to come. */
  assertFits(extra = 0): this {
    if (this.items.length + extra > MAX_TRANSACTION_ITEMS) throw new TooManyWritesError(this.tooMany.field, this.tooMany.hint);
    return this;
  }

  async commit(): Promise<void> {
    if (this.items.length === 0) return;
    this.assertFits();
    try {
      await this.ctx.db.send(new TransactWriteCommand({ TransactItems: this.items }));
    } catch (err) {
      if (err instanceof TransactionCanceledException || (err as Error).name === 'TransactionCanceledException') {
        const reasons = (err as TransactionCanceledException).CancellationReasons ?? [];
        const failures = reasons.flatMap((r, i) => (r.Code === 'ConditionalCheckFailed' ? [this.failures[i]!(r)] : []));
        // "Already created" explains every other failed condition of the replayed transaction (claims taken by itself).
        const failure = failures.find((f) => f instanceof AlreadyCreatedError) ?? failures[0];
        if (failure) throw failure;
        if (reasons.some((r) => r.Code === 'TransactionConflict')) throw new ConcurrentUpdateError();
      }
      if (err instanceof ConditionalCheckFailedException) throw this.failures[0]!({});
      throw err;
    }
  }

  private listKeys(listName: string, r: BaseRecord) {
    return { GSI1PK: keys.entityList(this.ctx.tenantId, listName), GSI1SK: keys.listSortKey(r.created_at, r.uuid) };
  }

  private entryKey<R extends BaseRecord>(def: EntityDef<R>, r: R, e: EntryDef) {
    return e.heldBy
      ? keys.reference(this.ctx.tenantId, e.heldBy, e.value, e.list ?? listNameOf(def, r), e.name, r.uuid)
      : keys.entry(this.ctx.tenantId, def.type, r.uuid, entryName(def, r, e), e.value);
  }

  private putEntry<R extends BaseRecord>(def: EntityDef<R>, r: R, e: EntryDef, env: Envelope) {
    this.add({
      Put: {
        TableName: tableName(),
        Item: {
          ...this.entryKey(def, r, e),
          GSI1PK: keys.entryList(this.ctx.tenantId, e.list ?? listNameOf(def, r), e.name, e.value),
          GSI1SK: keys.listSortKey(r.created_at, r.uuid),
          id: r.uuid,
          kind: 'entry',
          ...env,
        },
      },
    });
  }

  private deleteEntry<R extends BaseRecord>(def: EntityDef<R>, r: R, e: EntryDef) {
    this.add({ Delete: { TableName: tableName(), Key: this.entryKey(def, r, e) } });
  }

  private claim(u: UniqueDef, id: string) {
    this.add(
      {
        Put: {
          TableName: tableName(),
          Item: { ...keys.unique(this.ctx.tenantId, u.name, u.value), id, kind: 'unique', ...(u.data ? { data: u.data } : {}) },
          ConditionExpression: 'attribute_not_exists(PK) OR id = :id',
          ExpressionAttributeValues: { ':id': id },
        },
      },
      u.onTaken,
    );
  }

  private release(u: UniqueDef, id: string) {
    this.add({
      Delete: { TableName: tableName(), Key: keys.unique(this.ctx.tenantId, u.name, u.value), ConditionExpression: 'attribute_not_exists(PK) OR id = :id', ExpressionAttributeValues: { ':id': id } },
    });
  }
}

// An entry's sort key names its list too, so two entries with the same name and value in different lists stay distinct.
const entryName = <R extends BaseRecord>(def: EntityDef<R>, r: R, e: EntryDef) => (e.list && e.list !== listNameOf(def, r) ? `${e.list}@${e.name}` : e.name);
const entryId = <R extends BaseRecord>(def: EntityDef<R>, r: R, e: EntryDef) => `${entryName(def, r, e)}#${e.value}`;

/**
 * Runs a read-check-write attempt again when its transaction lost an optimistic race. Creates need it because
 * two overlapping transactions on one uniqueness claim can be cancelled as a conflict rather than a failed
 * condition (the retry then sees the claim: 422 taken); deletes because they are conditioned on the version read.
 */
export async function retryOnConflict<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof ConcurrentUpdateError) || n >= 15) throw err;
      // Exponential back-off with full jitter: a burst of writes on one item spreads out instead of colliding in lockstep.
      await sleep(Math.random() * Math.min(400, 10 * 2 ** n));
    }
  }
}

// ---------- references that hold under concurrency (docs/data-model.md, "References") ----------

/** A delete marker older than this no longer blocks new references (a crashed delete frees them again). */
export const DELETE_MARKER_TTL_MS = 30_000;

/** One referrer of an entity: a reference entry in the entity's partition. */
export interface ReferenceEntry {
  /** The referring record's id (e.g. a goal's uuid). */
  id: string;
  /** Its list and association, e.g. `objective` / `team`. */
  list: string;
  name: string;
  /** The referrer's lifecycle marker (`discarded`, `archived`), from its envelope. */
  state?: string;
}

/** Every reference entry naming an entity, strongly consistent (base-table Query of its partition). */
export async function referencesTo(ctx: DataCtx, type: string, id: string): Promise<ReferenceEntry[]> {
  const pk = keys.entity(ctx.tenantId, type, id).PK;
  if (!storable(pk)) return [];
  const out: ReferenceEntry[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await ctx.db.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :rf)',
        ExpressionAttributeValues: { ':pk': pk, ':rf': REFERENCE_SK_PREFIX },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const i of page.Items ?? []) {
      const sk = (i.SK as string).slice(REFERENCE_SK_PREFIX.length);
      const at = sk.indexOf('@');
      out.push({ id: i.id as string, list: sk.slice(0, at), name: sk.slice(at + 1, sk.lastIndexOf('#')), state: i.state as string | undefined });
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return out;
}

/**
 * Deletes an entity only if nothing that must keep referring to it does, race-free against writers that add
 * a reference (their transaction carries checkAlive on this entity and puts the reference entry here):
 *  1. mark the entity `deleting_at` (conditioned on the version read; bumps it): from now on every new
 *     reference's transaction fails its checkAlive (and retries);
 *  2. read every reference entry in the entity's partition, strongly consistent: every reference committed
 *     before step 1 is there;
 *  3. references that `blocks` (default: every referrer not discarded): clear the mark, throw `onReferenced`;
 *     none: delete the entity (conditioned on the marked version).
 * A crash between 1 and 3 leaves a mark that stops blocking after DELETE_MARKER_TTL_MS.
 */
export async function removeUnreferenced<R extends BaseRecord>(
  ctx: DataCtx,
  def: EntityDef<R>,
  current: Stored<R>,
  opts: { onReferenced: (refs: ReferenceEntry[]) => AppError; blocks?: (ref: ReferenceEntry) => boolean; also?: (tx: WriteTx) => void },
): Promise<void> {
  const key = keys.entity(ctx.tenantId, def.type, current.record.uuid);
  const mark = (set: boolean, version: number) =>
    ctx.db
      .send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tableName(),
                Key: key,
                UpdateExpression: set ? 'SET deleting_at = :at, v = :next' : 'REMOVE deleting_at SET v = :next',
                ConditionExpression: 'v = :v',
                ExpressionAttributeValues: { ':v': version, ':next': version + 1, ...(set ? { ':at': nowIso() } : {}) },
              },
            },
          ],
        }),
      )
      .catch((err: unknown) => {
        if ((err as Error).name === 'TransactionCanceledException') throw new ConcurrentUpdateError();
        throw err;
      });
  await mark(true, current.version);
  const marked = { record: current.record, version: current.version + 1 };
  const blocking = (await referencesTo(ctx, def.type, current.record.uuid)).filter(opts.blocks ?? ((r) => r.state !== 'discarded'));
  if (blocking.length) {
    await mark(false, marked.version).catch(() => undefined); // a failed clear expires on its own
    throw opts.onReferenced(blocking);
  }
  const tx = new WriteTx(ctx).remove(def, marked);
  opts.also?.(tx);
  await tx.commit();
}

export async function createEntity<R extends BaseRecord>(ctx: DataCtx, def: EntityDef<R>, record: R): Promise<R> {
  return createdOrStored(ctx, def, record.uuid, async () => {
    await new WriteTx(ctx).create(def, record).commit();
    return record;
  });
}

/**
 * Runs a create; when an earlier attempt of the same idempotent request already stored the record
 * (AlreadyCreatedError), answers with the stored record instead, so a retry after a crash applies once.
 */
export async function createdOrStored<R extends BaseRecord, T = R>(ctx: DataCtx, def: EntityDef<R>, uuid: string, create: () => Promise<T>, present: (stored: R) => T | Promise<T> = (r) => r as unknown as T): Promise<T> {
  try {
    return await create();
  } catch (err) {
    if (!(err instanceof AlreadyCreatedError) || err.type !== def.type || err.uuid !== uuid) throw err;
    const stored = await getEntity(ctx, def, uuid, true);
    if (!stored) throw new ConcurrentUpdateError();
    return present(stored.record);
  }
}

/**
 * Optimistic read-modify-write: reads the entity, lets `change` compute the new record (and add related
 * writes to the same transaction), commits conditioned on the version read, and retries on a lost race.
 * `change` must be side-effect free apart from `tx` because it may run more than once.
 */
export async function mutateEntity<R extends BaseRecord>(
  ctx: DataCtx,
  def: EntityDef<R>,
  id: string,
  change: (current: Stored<R>, tx: WriteTx) => Promise<R | undefined> | R | undefined,
  onMissing: () => AppError,
): Promise<{ before: Stored<R>; after: R }> {
  return retryOnConflict(async () => {
    const current = await getEntity(ctx, def, id, true);
    if (!current) throw onMissing();
    const tx = new WriteTx(ctx);
    const next = await change(current, tx);
    if (next === undefined) return { before: current, after: current.record };
    tx.replace(def, current, next);
    await tx.commit();
    return { before: current, after: next };
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const nowIso = () => new Date().toISOString();
