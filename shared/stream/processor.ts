import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent, DynamoDBBatchResponse } from 'aws-lambda';
import type { DataCtx } from '#shared/db/store.ts';
import type { Log } from '#shared/logger.ts';
import { applyChange } from '#shared/stream/apply.ts';
import { tableChange } from '#shared/stream/changes.ts';
import type { Projection } from '#shared/stream/projection.ts';

export interface ProcessorDeps {
  projections: readonly Projection[];
  /** Data access confined to one tenant (the tenant session in AWS). */
  data(tenantId: string): Promise<DataCtx>;
  log: Log;
}

/**
 * The change stream's processor: each record unmarshalled into a TableChange and offered to the projections.
 * Powertools' batch processing for DynamoDB Streams reports each failed record (by sequence number), so the
 * event source retries from the first failure (bisecting the batch) and finally hands it to the on-failure
 * destination; the local poller (scripts/lib/stream-poller.ts) calls the same handler with the same contract.
 * Records are processed in order, one at a time: changes of one item arrive in order in a shard.
 */
export function streamProcessor(deps: ProcessorDeps) {
  const processor = new BatchProcessor(EventType.DynamoDBStreams);
  const record = async (r: DynamoDBRecord) => {
    const change = tableChange(r);
    if (!change) return;
    await applyChange(change, deps.projections, { data: await deps.data(change.tenantId), log: deps.log });
  };
  return (event: DynamoDBStreamEvent, context?: Context): Promise<DynamoDBBatchResponse> =>
    processPartialResponse(event, record, processor, { context, processInParallel: false }) as Promise<DynamoDBBatchResponse>;
}
