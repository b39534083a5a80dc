import type { DataCtx } from '#shared/db/data-ctx.ts';
import type { Log } from '#shared/logger.ts';
import type { TableChange } from '#shared/table-change.ts';

/** What a projection gets besides the change: data access confined to the change's tenant, a logger. */
export interface ProjectionCtx {
  data: DataCtx;
  log: Log;
}

/**
 * One concern of derived state kept from the change stream (rollups, current values, notifications,
 * read models, outbound events, history). Each must be idempotent and version-checked: a change may be
 * delivered more than once and, across items, out of order; applying it again must converge to the same
 * state. A projection that throws fails the record (retried, then dead-lettered); it never half-applies.
 */
export interface Projection {
  name: string;
  /** Projections that must have applied the same change first (by name); the others run alongside. */
  after?: readonly string[];
  /** Cheap and pure: whether this projection cares about the change. */
  accepts(change: TableChange): boolean;
  apply(change: TableChange, ctx: ProjectionCtx): Promise<void>;
}
