import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listWebhooks } from '#shared/domain/webhooks/list.ts';
import { webhookCollectionChecks } from '#shared/domain/webhooks/service.ts';
import { presentWebhook } from '#shared/presenters/webhooks.ts';

export const handler = apiHandler({
  handle: async ({ ctx, query }) => {
    const result = await listWebhooks(ctx, query);
    return listResponse(
      'webhook',
      result,
      result.records.map((w) => presentWebhook(w)),
      webhookCollectionChecks(ctx),
    );
  },
});
