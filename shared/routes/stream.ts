import { ACCESS_REQUEST_QUEUE } from '#shared/domain/sharing/mail.ts';
import { WEBHOOK_DELIVERY_QUEUE } from '#shared/domain/webhooks/entity.ts';
import type { Need } from '#shared/routes/types.ts';

/**
 * Sort keys of items the change stream derives nothing from: the rate limiter's buckets (written by most
 * requests) and idempotency records. The event source drops them before batching (an event filter in AWS, the
 * poller locally), so they never take a batch's room.
 */
const DERIVES_NOTHING = ['RL', 'IDEM'];

/**
 * The change stream's one consumer (shared/stream/): a Lambda on the table's DynamoDB stream in AWS
 * (infra/stack.ts), the stream poller on the local stack (scripts/lib/stream-poller.ts). `sendsTo` is every
 * queue a projection hands work to.
 */
export const streamProcessorRow = {
  handler: 'functions/stream/processor.ts',
  table: 'write' as const,
  sendsTo: [ACCESS_REQUEST_QUEUE, WEBHOOK_DELIVERY_QUEUE],
  /** The outbound events projection publishes to the stack's EventBridge bus. */
  needs: ['events:publish'] as Need[],
  batchSize: 100,
  /** Records whose item's sort key is one of these are filtered out by the event source (DERIVES_NOTHING). */
  skipSortKeys: DERIVES_NOTHING,
  timeoutSeconds: 60,
  /** Deliveries of a failing record before it goes to the on-failure destination (the batch bisected on each error). */
  retryAttempts: 10,
};
