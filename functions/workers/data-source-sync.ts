import { tenantDb } from '#shared/db/tenant-scope.ts';
import { DATA_SOURCE_SYNC_QUEUE } from '#shared/domain/integrations/entity.ts';
import { runSync, type SyncBudget, type SyncDeps } from '#shared/domain/integrations/sync.ts';
import { sendEmail } from '#shared/email/mailer.ts';
import { RateLimitedError } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { queueSender, type QueueSender, type WorkerHandler } from '#shared/queue/queue.ts';
import { batchHandler } from '#functions/workers/batch.ts';

/** The worker over any fetch, DNS, mailer, budget and queue (fakes in tests); `handler` below is the deployed one. */
export const dataSourceSyncHandler = (deps: () => SyncDeps): WorkerHandler =>
  batchHandler({
    name: 'data source sync',
    schema: () => import('#shared/schemas/messages/data-source-sync.ts').then((m) => m.SyncMessageSchema),
    log: logger,
    concurrent: true, // each fetch may wait 10 s for its source; a batch must fit the function's timeout
    process: async (msg) => runSync({ tenantId: msg.tenant_uuid, db: await tenantDb(msg.tenant_uuid) }, msg, deps()),
  });

/**
 * A sync's charge on the tenant's budget through a limiter's `take` (RateLimiter.take: resolves when admitted,
 * throws RateLimitedError with Retry-After when refused): granted, or refused with the wait it names.
 */
export const limiterBudget =
  (take: (tenantId: string, userId: string) => Promise<unknown>): SyncDeps['budget'] =>
  async (tenantId, userId): Promise<SyncBudget> => {
    try {
      await take(tenantId, userId);
      return { granted: true };
    } catch (err) {
      if (!(err instanceof RateLimitedError)) throw err;
      return { granted: false, retryAfterSeconds: Number(err.headers['Retry-After']) || 1 };
    }
  };

/**
 * The API's own limiter (`rateLimiter` of shared/http/api.ts: the same buckets and limits as the tenant's
 * requests), loaded with the first sync rather than at cold start.
 */
const apiLimiterTake = async (tenantId: string, userId: string) => (await import('#shared/http/api.ts')).rateLimiter.take(tenantId, userId);

/** A run sent again to the sync queue after `delaySeconds`. */
export const sendLater =
  (queue: QueueSender): SyncDeps['later'] =>
  async (msg, delaySeconds) =>
    void (await queue.send(DATA_SOURCE_SYNC_QUEUE, msg, { delaySeconds }));

/** Consumer of the data-source-syncs queue: one run of one http_json source per message, charged to its tenant's budget. */
export const handler = dataSourceSyncHandler(() => ({
  sendEmail,
  log: logger,
  budget: limiterBudget(apiLimiterTake),
  later: sendLater(queueSender()),
}));
