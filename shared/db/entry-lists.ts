import { keys } from '#shared/db/keys.ts';

/**
 * A declared entry list: "the <list> entities whose <name> is <value>", one GSI1 partition per value.
 * Entities declare theirs once (e.g. `membersOfTeam` in teams/entity.ts) and both the entity's `entries` and
 * every reader use that constant, so renaming a list is one edit and a typo does not compile.
 */
export interface EntryList {
  /** The list family (GSI1PK prefix): the entity's list name, e.g. `team`, or a goal kind. */
  readonly list: string;
  /** The association, e.g. `member`, `parent`. */
  readonly name: string;
  /**
   * The entity type the entry's value names when the association is a reference that must hold (a goal's
   * time period and teams): the entry is then kept in that entity's partition, checked alive in the writing
   * transaction, and found by the referenced entity's delete (references.ts removeUnreferenced).
   */
  readonly heldBy?: string;
  /**
   * The entity type the entry's value names when the entry is only kept in that entity's partition (a goal's
   * `child_of` entries, in the parent's): a strongly consistent Query there lists every entry committed, where
   * the list's index may lag. No existence check: the writer checks that entity itself (keptEntries in references.ts).
   */
  readonly keptBy?: string;
}

export const entryList = (list: string, name: string, opts: { heldBy?: string; keptBy?: string } = {}): EntryList => ({
  list,
  name,
  ...opts,
});

/** The GSI1 partition of one value of an entry list. */
export const entryListPartition = (tenantId: string, of: EntryList, value: string) => keys.entryList(tenantId, of.list, of.name, value);
