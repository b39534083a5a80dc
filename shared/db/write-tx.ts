import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { Expr, type ItemCondition } from '#shared/db/expressions.ts';
import { keys } from '#shared/db/keys.ts';
import type { BaseRecord, EntityDef, EntryDef, Envelope, Stored, UniqueDef } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { tableName } from '#shared/db/reads.ts';
import type { SideItem, SideKey } from '#shared/db/side-items.ts';
import { TABLE_DEFINITION } from '#shared/db/table.ts';
import { AlreadyCreatedError, transactionError, type ConditionFailure } from '#shared/db/tx-errors.ts';
import { type AppError, ConcurrentUpdateError, MAX_TRANSACTION_ITEMS, TooManyWritesError } from '#shared/errors.ts';
import { idsAreSeeded } from '#shared/ids.ts';

const TTL_ATTRIBUTE = TABLE_DEFINITION.ttlAttribute;

/** A delete marker older than this no longer blocks new references (a crashed delete frees them again; references.ts). */
export const DELETE_MARKER_TTL_MS = 30_000;

const listNameOf = <R extends BaseRecord>(def: EntityDef<R>, r: R) => def.listName?.(r) ?? def.type;
const expiryOf = <R extends BaseRecord>(def: EntityDef<R>, r: R) => {
  const at = def.expiresAt?.(r);
  return at === undefined ? {} : { [TTL_ATTRIBUTE]: at };
};

type TxItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * Collects the writes of one logical change and commits them atomically (TransactWriteItems), mapping a
 * failed condition back to the typed error of the operation that carried it. Nothing is written unless
 * everything is.
 */
export class WriteTx {
  private items: TxItem[] = [];
  private failures: ConditionFailure[] = [];
  private tooMany: { field?: string; hint?: string } = {};
  private alive = new Set<string>();

  constructor(private readonly ctx: DataCtx) {}

  get size(): number {
    return this.items.length;
  }

  /** Adds a raw operation (Put/Update/Delete/ConditionCheck) with the error its failed condition means. Store-internal: callers use the typed operations. */
  private add(item: TxItem, onConditionFail: ConditionFailure = () => new ConcurrentUpdateError()): this {
    this.items.push(item);
    this.failures.push(onConditionFail);
    return this;
  }

  create<R extends BaseRecord>(def: EntityDef<R>, stated: R): this {
    const record = def.layout?.(stated) ?? stated;
    const env = def.envelope?.(record) ?? {};
    // Under a seeded id the record can only be there because an earlier attempt of this request stored it.
    const seeded = idsAreSeeded();
    this.add(
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...keys.entity(this.ctx.tenantId, def.type, record.uuid),
            ...this.listKeys(listNameOf(def, record), record),
            id: record.uuid,
            kind: def.type,
            v: 1,
            rec: record,
            ...env,
            ...expiryOf(def, record),
          },
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
  replace<R extends BaseRecord>(def: EntityDef<R>, before: Stored<R>, stated: R): this {
    // a record stored under an older layout moves its entries now (their ids differ by where they are kept)
    const after = def.layout?.(stated) ?? stated;
    const envBefore = def.envelope?.(before.record) ?? {};
    const env = def.envelope?.(after) ?? {};
    const envChanged = JSON.stringify(envBefore) !== JSON.stringify(env);
    this.add({
      Put: {
        TableName: tableName(),
        Item: {
          ...keys.entity(this.ctx.tenantId, def.type, after.uuid),
          ...this.listKeys(listNameOf(def, after), after),
          id: after.uuid,
          kind: def.type,
          v: before.version + 1,
          rec: after,
          ...env,
          ...expiryOf(def, after),
        },
        ConditionExpression: 'v = :v',
        ExpressionAttributeValues: { ':v': before.version },
      },
    });
    const oldEntries = new Map((def.entries?.(before.record) ?? []).map((e) => [entryId(def, before.record, e), e]));
    const newEntries = new Map((def.entries?.(after) ?? []).map((e) => [entryId(def, after, e), e]));
    for (const [k, e] of oldEntries) if (!newEntries.has(k)) this.deleteEntry(def, before.record, e);
    for (const [k, e] of newEntries) {
      const old = oldEntries.get(k);
      // an entry kept at its key may still move to another list (its GSI1 partition: a check-in's list shard)
      const listMoved = !!old && entryListOf(def, before.record, old) !== entryListOf(def, after, e);
      if (envChanged || !old || listMoved) this.putEntry(def, after, e, env);
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
      Delete: {
        TableName: tableName(),
        Key: keys.entity(this.ctx.tenantId, def.type, before.record.uuid),
        ConditionExpression: 'v = :v',
        ExpressionAttributeValues: { ':v': before.version },
      },
    });
    for (const e of def.entries?.(before.record) ?? []) this.deleteEntry(def, before.record, e);
    for (const u of def.uniques?.(before.record) ?? []) this.release(u, before.record.uuid);
    return this;
  }

  /** The entity exists (not deleted) when the transaction commits; else `onFail` (e.g. a 422 naming the field). */
  checkExists<R extends BaseRecord>(def: EntityDef<R>, id: string, onFail: () => AppError): this {
    return this.add(
      {
        ConditionCheck: {
          TableName: tableName(),
          Key: keys.entity(this.ctx.tenantId, def.type, id),
          ConditionExpression: 'attribute_exists(PK)',
        },
      },
      onFail,
    );
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
      {
        ConditionCheck: {
          TableName: tableName(),
          Key: keys.entity(this.ctx.tenantId, def.type, read.record.uuid),
          ConditionExpression: 'v = :v',
          ExpressionAttributeValues: { ':v': read.version },
        },
      },
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
    return this.add(
      {
        Put: { TableName: tableName(), Item: { ...attrs, ...key }, ...(condition ? { ConditionExpression: condition, ...e.attrs() } : {}) },
      },
      opts.onFail,
    );
  }

  /** Deletes a side item (no condition: deleting an absent item is a no-op), or only if `opts.if` holds. */
  deleteSide(key: SideKey, opts: { if?: ItemCondition; onFail?: () => AppError } = {}): this {
    const e = new Expr();
    const condition = e.condition(opts.if);
    return this.add(
      { Delete: { TableName: tableName(), Key: key, ...(condition ? { ConditionExpression: condition, ...e.attrs() } : {}) } },
      opts.onFail,
    );
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
    return this.add(
      {
        Update: {
          TableName: tableName(),
          Key: key,
          UpdateExpression: `SET ${sets.join(', ')}`,
          ...(condition ? { ConditionExpression: condition } : {}),
          ...e.attrs(),
        },
      },
      onFail,
    );
  }

  /** The side item satisfies `condition` when the transaction commits. */
  checkSide(key: SideKey, condition: ItemCondition, onFail?: () => AppError): this {
    const e = new Expr();
    return this.add(
      {
        ConditionCheck: {
          TableName: tableName(),
          Key: key,
          ConditionExpression: e.condition(condition) ?? 'attribute_exists(PK) OR attribute_not_exists(PK)',
          ...e.attrs(),
        },
      },
      onFail,
    );
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
      throw transactionError(err, this.failures);
    }
  }

  private listKeys(listName: string, r: BaseRecord) {
    return { GSI1PK: keys.entityList(this.ctx.tenantId, listName), GSI1SK: keys.listSortKey(r.created_at, r.uuid) };
  }

  private entryKey<R extends BaseRecord>(def: EntityDef<R>, r: R, e: EntryDef) {
    const keeper = e.heldBy ?? e.keptBy;
    return keeper
      ? keys.reference(this.ctx.tenantId, keeper, e.value, e.list ?? listNameOf(def, r), e.name, r.uuid)
      : keys.entry(this.ctx.tenantId, def.type, r.uuid, entryName(def, r, e), e.value);
  }

  private putEntry<R extends BaseRecord>(def: EntityDef<R>, r: R, e: EntryDef, env: Envelope) {
    this.add({
      Put: {
        TableName: tableName(),
        Item: {
          ...this.entryKey(def, r, e),
          GSI1PK: keys.entryList(this.ctx.tenantId, entryListOf(def, r, e), e.name, e.value),
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
      Delete: {
        TableName: tableName(),
        Key: keys.unique(this.ctx.tenantId, u.name, u.value),
        ConditionExpression: 'attribute_not_exists(PK) OR id = :id',
        ExpressionAttributeValues: { ':id': id },
      },
    });
  }
}

const entryListOf = <R extends BaseRecord>(def: EntityDef<R>, r: R, e: EntryDef) => e.list ?? listNameOf(def, r);
// An entry's sort key names its list too, so two entries with the same name and value in different lists stay distinct.
const entryName = <R extends BaseRecord>(def: EntityDef<R>, r: R, e: EntryDef) =>
  e.list && e.list !== listNameOf(def, r) ? `${e.list}@${e.name}` : e.name;
// ...and where it is kept: the same entry moved to the named entity's partition (keptBy) is a delete and a put.
const entryId = <R extends BaseRecord>(def: EntityDef<R>, r: R, e: EntryDef) =>
  `${e.heldBy || e.keptBy ? 'RF:' : ''}${entryName(def, r, e)}#${e.value}`;
