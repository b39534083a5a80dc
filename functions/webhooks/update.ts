import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { updateWebhook, webhookAccessSource, webhookChecks } from '#shared/domain/webhooks/service.ts';
import { presentWebhook } from '#shared/presenters/webhooks.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/webhook-update.ts').then((m) => m.WebhookUpdateBody),
  handle: async ({ ctx, params, body }) =>
    recordResponse(200, 'webhook', presentWebhook(await updateWebhook(ctx, params.id!, body)), webhookChecks(ctx), webhookAccessSource),
});
