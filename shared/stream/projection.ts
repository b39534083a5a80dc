import type { DataCtx } from '#shared/db/model.ts';
import type { Log } from '#shared/logger.ts';

/**
 * One committed change of a table item as the change stream delivers it (NEW_AND_OLD_IMAGES), images
 * unmarshalled. The same shape comes from DynamoDB Streams in AWS (the processor Lambda) and from DynamoDB
 * Local's stream on the local stack (scripts/lib/stream-poller.ts), so every projection runs the same code.
 */
export interface TableChange {
  /** The stream record's eventID (unique per change record; the same when a batch is retried). */
  eventId: string;
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  /** When the change was committed (ApproximateCreationDateTime), ISO 8601. */
  at: string;
  /** The tenant the item belongs to (from `T#<tenant>#` of its PK). */
  tenantId: string;
  keys: { PK: string; SK: string };
  oldImage?: Record<string, unknown>;
  newImage?: Record<string, unknown>;
}

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
