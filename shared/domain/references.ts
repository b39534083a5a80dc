/**
 * References that hold under concurrency (docs/data-model.md): a write that references an entity a delete
 * refuses to remove while it has dependents (a goal naming a time period or a team) moves that entity's
 * version in its transaction (store `markReferenced`), and the delete is conditioned on the version it read.
 */

/**
 * Whether the entity was referenced between two reads of a retried delete: its version moved while its
 * record (and so `updated_at`) stayed the same, which only a referencing write (store markReferenced) or a
 * touch does. Shared by the deletes that refuse while dependents exist (time periods, teams).
 */
export function referencedSince(first: { version: number; record: { updated_at: string } } | undefined, now: { version: number; record: { updated_at: string } }): boolean {
  return !!first && now.version > first.version && now.record.updated_at === first.record.updated_at;
}
