import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent, DynamoDBBatchResponse } from 'aws-lambda';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import type { Log } from '#shared/logger.ts';
import { applyChange } from '#shared/stream/apply.ts';
import { tableChange } from '#shared/stream/changes.ts';
import { perItemInOrder } from '#shared/stream/per-item-order.ts';
import type { Projection } from '#shared/stream/projection.ts';

export interface ProcessorDeps {
  projections: readonly Projection[];
  /** Data access confined to one tenant (the tenant session in AWS). */
  data(tenantId: string): Promise<DataCtx>;
  log: Log;
  /** Changes applied at once within a batch (default 16). */
  concurrency?: number;
}

const itemKey = (r: DynamoDBRecord) => JSON.stringify(r.dynamodb?.Keys ?? r.eventID);

/**
 * The change stream's processor: each record unmarshalled into a TableChange and offered to the projections.
 * Powertools' batch processing for DynamoDB Streams reports each failed record (by sequence number), so the
 * event source retries from the first failure (bisecting the batch) and finally hands it to the on-failure
 * destination; the local poller (scripts/lib/stream-poller.ts) calls the same handler with the same contract.
 *
 * Changes of different items are applied concurrently (at most `concurrency` at once; projections are
 * version-checked and retry conflicts, as they must be anyway when shards are processed in parallel), changes
 * of one item in the order the shard delivered them (shared/stream/per-item-order.ts). One at a time, the
 * processor fell behind a busy tenant's writes.
 */
export function streamProcessor(deps: ProcessorDeps) {
  const record = async (r: DynamoDBRecord) => {
    const change = tableChange(r);
    if (!change) return;
    await applyChange(change, deps.projections, { data: await deps.data(change.tenantId), log: deps.log });
  };
  return (event: DynamoDBStreamEvent, context?: Context): Promise<DynamoDBBatchResponse> =>
    // A processor per batch: it holds the batch's failures, and batches of one handler may run at once (the local
    // poller's lanes). One shared across them reported a failed record of one batch in another's answer, or in
    // none: the record was passed as done and its projections never ran again (a lost webhook event).
    processPartialResponse(event, perItemInOrder(itemKey, deps.concurrency ?? 16, record), new BatchProcessor(EventType.DynamoDBStreams), {
      context,
      processInParallel: true,
    }) as Promise<DynamoDBBatchResponse>;
}
