import { ACCESS_REQUEST_QUEUE } from '#shared/domain/sharing/mail.ts';
import { WEBHOOK_DELIVERY_QUEUE } from '#shared/domain/webhooks/entity.ts';
import type { StreamConsumer } from '#shared/routes/types.ts';
import { ENTITY_SK } from '#shared/db/keys.ts';

/**
 * Every projection derives from entity items and the side items kept like them (sort key `#`: goals,
 * check-ins, labels, tenants, access requests); none from index entries (`IX#`, `RF#`), read-model entries
 * (`RM#`), page anchors, history points, the rate limiter's buckets (`RL`, written by most requests) or
 * idempotency records (`IDEM`). The event source drops those before batching (an event filter in AWS, the poller
 * locally), so they take no room in a batch: a goal write's entries and read models are most of its records.
 * A projection that needs another sort key adds it here (test/unit/stream-filter.test.ts checks every
 * projection ignores the rest).
 */
const DELIVERED_SORT_KEYS = [ENTITY_SK];

/**
 * The change stream's one consumer (shared/stream/): a Lambda on the table's DynamoDB stream in AWS
 * (infra/stack.ts), the stream poller on the local stack (scripts/lib/stream-poller.ts). `sendsTo` is every
 * queue a projection hands work to.
 */
export const streamProcessorRow: StreamConsumer = {
  name: 'StreamProcessor',
  handler: 'functions/stream/processor.ts',
  description: 'Table change stream: rollups, current values, access-request notices, outbound events',
  table: 'write',
  sendsTo: [ACCESS_REQUEST_QUEUE, WEBHOOK_DELIVERY_QUEUE],
  /** The outbound events projection publishes to the stack's EventBridge bus. */
  needs: ['events:publish'],
  batchSize: 100,
  sortKeys: DELIVERED_SORT_KEYS,
  timeoutSeconds: 60,
  retryAttempts: 10,
};

/** The change stream's consumers, one Lambda each on the table's stream (gathered in shared/routes/index.ts). */
export const streamConsumers: StreamConsumer[] = [streamProcessorRow];
