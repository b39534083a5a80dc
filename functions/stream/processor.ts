import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { tenantDb } from '#shared/db/tenant-scope.ts';
import { logger } from '#shared/logger.ts';
import { emitMetrics } from '#shared/observability/emit.ts';
import { streamProcessor } from '#shared/stream/processor.ts';
import { projections } from '#shared/stream/projections.ts';

/** The table's change stream → every projection (shared/stream/projections.ts), each tenant through its confined client. */
const processBatch = streamProcessor({ projections, data: async (tenantId) => ({ tenantId, db: await tenantDb(tenantId) }), log: logger });

/** How old each record of the batch is as the processor receives it, ms (the operator's StreamLag metric). */
export const recordAgesMs = (event: DynamoDBStreamEvent, now = Date.now()): number[] =>
  event.Records.flatMap((r) =>
    typeof r.dynamodb?.ApproximateCreationDateTime === 'number' ? [Math.max(0, now - r.dynamodb.ApproximateCreationDateTime * 1000)] : [],
  );

export const handler = async (event: DynamoDBStreamEvent, context?: Context) => {
  const ages = recordAgesMs(event); // at receipt, before the batch's own processing time
  const result = await processBatch(event, context);
  await emitMetrics({ StreamLag: ages });
  return result;
};
