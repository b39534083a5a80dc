import { apiHandler, json } from '#shared/http/api.ts';
import { redeliver } from '#shared/domain/webhooks/deliveries.ts';
import { presentDelivery } from '#shared/presenters/webhooks.ts';
import { queueSender } from '#shared/queue/queue.ts';
import { requireAdmin } from '#shared/domain/webhooks/service.ts';

/** 202: a new round of attempts is queued (same event id and body). */
export const handler = apiHandler({
  handle: async ({ ctx, params }) =>
    json(202, {
      data: { type: 'webhook_delivery', record: presentDelivery(await redeliver(ctx, params.id!, params.delivery_uuid!, queueSender())) },
    }),
  authorizeReplay: ({ ctx }) => requireAdmin(ctx),
});
