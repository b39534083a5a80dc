import type { EntryList } from '#shared/db/entry-lists.ts';
import { keys } from '#shared/db/keys.ts';
import type { AppError } from '#shared/errors.ts';

// The entity model: pure types and builders, no AWS SDK and no configuration at runtime (domain modules import it).

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
  /** Kept in the partition of the entity `value` names (EntryList.keptBy), without a reference's existence check. */
  keptBy?: string;
  /** The error when a new reference names an entity that does not exist (any more). */
  onMissing?: () => AppError;
}

/** The entry of `record` in a declared entry list; `onMissing` for a reference (heldBy) whose target is gone. */
export const entry = (of: EntryList, value: string, onMissing?: () => AppError): EntryDef => ({
  list: of.list,
  name: of.name,
  value,
  ...(of.heldBy ? { heldBy: of.heldBy, onMissing } : {}),
  ...(of.keptBy ? { keptBy: of.keptBy } : {}),
});

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
  /**
   * The record as this code stores it: a record stored under an older layout (entries kept elsewhere) is
   * brought to the current one by its next write (WriteTx applies it to every record it creates or replaces).
   */
  layout?(r: R): R;
}

export interface Stored<R> {
  record: R;
  version: number;
}

/** A row of GSI1: an entity or entry item seen through the list index. */
export interface ListEntry {
  id: string;
  sortKey: string;
  vis?: string;
  acl?: string[];
  state?: string;
}

/** The list row of a record as its entity writes it (id, creation-order sort key, envelope): for lists assembled in memory. */
export const listEntryOf = <R extends BaseRecord>(def: EntityDef<R>, r: R): ListEntry => ({
  id: r.uuid,
  sortKey: keys.listSortKey(r.created_at, r.uuid),
  ...(def.envelope?.(r) ?? {}),
});
