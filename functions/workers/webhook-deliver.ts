import { tenantDb } from '#shared/db/tenant-scope.ts';
import { attemptDelivery, type AttemptDeps } from '#shared/domain/webhooks/deliveries.ts';
import { WEBHOOK_DELIVERY_QUEUE, WEBHOOK_WORKER_TIMEOUT_SECONDS } from '#shared/domain/webhooks/entity.ts';
import { postWebhook } from '#shared/domain/webhooks/post.ts';
import { webhookSettings } from '#shared/domain/webhooks/settings.ts';
import { logger } from '#shared/logger.ts';
import { emitMetrics } from '#shared/observability/emit.ts';
import { queueSender, type WorkerHandler } from '#shared/queue/queue.ts';
import { batchHandler } from '#functions/workers/batch.ts';

/** A POST answered (or timed out) this late marks its endpoint slow: the rest of its lane in the batch waits for a later batch. */
const SLOW_ATTEMPT_MS = 2_000;
/** How long a record put back for its lane waits before it is visible again. */
const LANE_DEFER_SECONDS = 5;
/** Room kept for the batch's end (the last writes, the answer) within the worker's timeout. */
const BATCH_MARGIN_MS = 5_000;

/**
 * The worker over any queue and poster (fakes in unit tests); `handler` below is the deployed one.
 *
 * A batch's deliveries run in lanes, one per endpoint: deliveries to different endpoints at once, those to one
 * endpoint one after another. With the worker's concurrency (WEBHOOK_DELIVERY_CONCURRENCY batches), that is the
 * most deliveries an endpoint has in flight, however many events a burst or an import makes. A lane whose endpoint
 * answered slowly (SLOW_ATTEMPT_MS), or that has no time left for another attempt within the worker's timeout,
 * puts its remaining records back on the queue (a new message, the same delivery: no attempt is used) for a later
 * batch, so one slow endpoint holds a batch for one attempt, while the batch's other endpoints are served at once.
 */
export const webhookDeliverHandler = (deps: () => AttemptDeps): WorkerHandler =>
  batchHandler({
    name: 'webhook delivery',
    schema: () => import('#shared/schemas/messages/webhook-delivery.ts').then((m) => m.DeliveryMessageSchema),
    log: logger,
    laneOf: (msg) => `${msg.tenant_uuid}/${msg.webhook_uuid}`,
    process: async (msg, meta) => {
      const { lane } = meta;
      const left = WEBHOOK_WORKER_TIMEOUT_SECONDS * 1000 - (Date.now() - lane.startedAt);
      if (!lane.held && left < webhookSettings.timeoutMs + BATCH_MARGIN_MS) lane.held = 'no time left in the batch';
      if (lane.held) {
        await deps().queue.send(WEBHOOK_DELIVERY_QUEUE, msg, { delaySeconds: LANE_DEFER_SECONDS });
        return { delivery_uuid: msg.delivery_uuid, outcome: 'put back', reason: lane.held };
      }
      const d = deps();
      const post = d.post ?? postWebhook;
      // the receiver's time only (not the table's): a slow table under load is no reason to hold an endpoint back
      const timed: typeof postWebhook = async (...args) => {
        const started = Date.now();
        try {
          return await post(...args);
        } finally {
          if (Date.now() - started >= SLOW_ATTEMPT_MS) lane.held = 'its endpoint answered slowly';
        }
      };
      const ctx = { tenantId: msg.tenant_uuid, db: await tenantDb(msg.tenant_uuid) };
      const result = await attemptDelivery(ctx, msg, meta.messageId, { ...d, post: timed });
      if (result.outcome === 'retrying' || result.outcome === 'failed')
        await emitMetrics({ WebhookDeliveryFailures: 1, WebhookDeliveriesFailed: result.outcome === 'failed' ? 1 : undefined });
      return { delivery_uuid: msg.delivery_uuid, ...result };
    },
  });

/** Consumer of the webhook-deliveries queue: one signed POST per message, the outcome recorded on the delivery. */
export const handler = webhookDeliverHandler(() => ({ queue: queueSender() }));
