import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { showWebhook, webhookAccessSource, webhookChecks } from '#shared/domain/webhooks/service.ts';
import { presentWebhook } from '#shared/presenters/webhooks.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params }) =>
    recordResponse(200, 'webhook', presentWebhook(await showWebhook(ctx, params.id!)), webhookChecks(ctx), webhookAccessSource),
});
