import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { canRedeliver, listDeliveries } from '#shared/domain/webhooks/deliveries.ts';
import { presentDelivery } from '#shared/presenters/webhooks.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params, query }) => {
    const result = await listDeliveries(ctx, params.id!, query);
    return listResponse('webhook_delivery', result, result.records.map(presentDelivery), { can_redeliver: canRedeliver(ctx) });
  },
});
