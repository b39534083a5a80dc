import { tenantDb } from '#shared/db/tenant-scope.ts';
import { attemptDelivery, type AttemptDeps } from '#shared/domain/webhooks/deliveries.ts';
import { logger } from '#shared/logger.ts';
import { emitMetrics } from '#shared/observability/emit.ts';
import { queueSender, type WorkerHandler } from '#shared/queue/queue.ts';
import { batchHandler } from '#functions/workers/batch.ts';

/** The worker over any queue and poster (fakes in unit tests); `handler` below is the deployed one. */
export const webhookDeliverHandler = (deps: () => AttemptDeps): WorkerHandler =>
  batchHandler({
    name: 'webhook delivery',
    schema: () => import('#shared/schemas/messages/webhook-delivery.ts').then((m) => m.DeliveryMessageSchema),
    log: logger,
    concurrent: true, // each attempt may wait 10 s for its receiver; a batch must fit the function's timeout
    process: async (msg, meta) => {
      const result = await attemptDelivery({ tenantId: msg.tenant_uuid, db: await tenantDb(msg.tenant_uuid) }, msg, meta.messageId, deps());
      if (result.outcome === 'retrying' || result.outcome === 'failed')
        await emitMetrics({ WebhookDeliveryFailures: 1, WebhookDeliveriesFailed: result.outcome === 'failed' ? 1 : undefined });
      return { delivery_uuid: msg.delivery_uuid, ...result };
    },
  });

/** Consumer of the webhook-deliveries queue: one signed POST per message, the outcome recorded on the delivery. */
export const handler = webhookDeliverHandler(() => ({ queue: queueSender() }));
