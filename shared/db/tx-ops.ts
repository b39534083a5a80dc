import type { ItemCondition } from '#shared/db/expressions.ts';
import type { BaseRecord, EntityDef, Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import type { SideItem, SideKey } from '#shared/db/side-items.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { MAX_TRANSACTION_ITEMS } from '#shared/errors.ts';

/**
 * A transaction's operations as plain data: what a pure planner (a stream projection's `project`, the goal
 * read-model sync's plan) returns, compared in unit tests without a table, and committed here through the one
 * `WriteTx`. The same typed operations as WriteTx's, each with the same condition (a replace at the version
 * read, a create of an absent item, a side item's `if`); constructors check the record's type against its def.
 */
export type TxOp =
  | { op: 'create'; def: EntityDef<BaseRecord>; record: BaseRecord }
  | { op: 'replace'; def: EntityDef<BaseRecord>; before: Stored<BaseRecord>; after: BaseRecord }
  | { op: 'checkVersion'; def: EntityDef<BaseRecord>; read: Stored<BaseRecord> }
  | { op: 'putSide'; key: SideKey; item: SideItem; if?: ItemCondition }
  | { op: 'deleteSide'; key: SideKey; if?: ItemCondition }
  | { op: 'incrementSide'; key: SideKey; add: Record<string, number> };

// the def is kept for the commit only; the constructors are where the record is checked against it
const anyDef = <R extends BaseRecord>(def: EntityDef<R>) => def as unknown as EntityDef<BaseRecord>;

export const createOp = <R extends BaseRecord>(def: EntityDef<R>, record: R): TxOp => ({ op: 'create', def: anyDef(def), record });
export const replaceOp = <R extends BaseRecord>(def: EntityDef<R>, before: Stored<R>, after: R): TxOp => ({
  op: 'replace',
  def: anyDef(def),
  before,
  after,
});
export const checkVersionOp = <R extends BaseRecord>(def: EntityDef<R>, read: Stored<R>): TxOp => ({
  op: 'checkVersion',
  def: anyDef(def),
  read,
});
export const putSideOp = (key: SideKey, item: SideItem, cond?: ItemCondition): TxOp => ({
  op: 'putSide',
  key,
  item,
  ...(cond ? { if: cond } : {}),
});
export const deleteSideOp = (key: SideKey, cond?: ItemCondition): TxOp => ({ op: 'deleteSide', key, ...(cond ? { if: cond } : {}) });
export const incrementSideOp = (key: SideKey, add: Record<string, number>): TxOp => ({ op: 'incrementSide', key, add });

/** Adds the operations to `tx`, in order. */
export function addOps(tx: WriteTx, ops: readonly TxOp[]): WriteTx {
  for (const o of ops) {
    if (o.op === 'create') tx.create(o.def, o.record);
    else if (o.op === 'replace') tx.replace(o.def, o.before, o.after);
    else if (o.op === 'checkVersion') tx.checkVersion(o.def, o.read);
    else if (o.op === 'putSide') tx.putSide(o.key, o.item, o.if ? { if: o.if } : {});
    else if (o.op === 'deleteSide') tx.deleteSide(o.key, o.if ? { if: o.if } : {});
    else tx.incrementSide(o.key, o.add);
  }
  return tx;
}

/**
 * Commits planned writes in order: each of `transactions` as one transaction, then `packed`, its operations in
 * order in as few transactions as their items fit (at most MAX_TRANSACTION_ITEMS each: a replace carries its
 * entries and claims too). A failed condition throws its typed error (ConcurrentUpdateError for a version read)
 * and commits nothing more: the caller reads and plans again. Returns the transactions committed.
 */
export async function commitPlanned(ctx: DataCtx, transactions: readonly TxOp[][] = [], packed: readonly TxOp[] = []): Promise<number> {
  let committed = 0;
  for (const ops of transactions) {
    if (ops.length === 0) continue;
    await addOps(new WriteTx(ctx), ops).commit();
    committed++;
  }
  let part = new WriteTx(ctx);
  for (const o of packed) {
    if (part.size >= MAX_TRANSACTION_ITEMS) {
      await part.commit();
      committed++;
      part = new WriteTx(ctx);
    }
    addOps(part, [o]);
  }
  if (part.size > 0) {
    await part.commit();
    committed++;
  }
  return committed;
}
