// Apart from the stream's projections (shared/stream/): the domain reads changes too (webhook events,
// shared/domain/webhooks/events.ts), and the domain imports nothing from shared/stream/ (.dependency-cruiser.cjs).

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
  /** The stream record's sequence number (digits): increasing over the changes of one item, so it orders them. */
  sequence?: string;
  oldImage?: Record<string, unknown>;
  newImage?: Record<string, unknown>;
}
