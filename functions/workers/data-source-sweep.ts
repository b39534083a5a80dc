import { nowIso } from '#shared/clock.ts';
import { baseDb } from '#shared/db/client.ts';
import { sweepDue } from '#shared/domain/integrations/sync-sweep.ts';
import { logger } from '#shared/logger.ts';
import { queueSender } from '#shared/queue/queue.ts';

/**
 * The data-source schedule's sweep, run every minute by an EventBridge rule (infra/stack.ts; locally the local
 * stack's timer). Its only table grant is a Query of the due index's partitions (`SYNCDUE#*`), across tenants
 * by design: it learns tenant, source and due time, nothing else (shared/domain/integrations/sync-due.ts).
 */
export const handler = async (): Promise<{ queued: number }> => {
  const out = await sweepDue(baseDb(), queueSender(), nowIso());
  logger.info('data source sweep', out);
  return out;
};
