import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { deleteWebhook, webhookAccessSource, webhookChecks } from '#shared/domain/webhooks/service.ts';
import { presentWebhook } from '#shared/presenters/webhooks.ts';

/** 200 with the deleted endpoint; its pending deliveries end `failed` when their next attempt finds it gone. */
export const handler = apiHandler({
  handle: async ({ ctx, params }) =>
    recordResponse(200, 'webhook', presentWebhook(await deleteWebhook(ctx, params.id!)), webhookChecks(ctx), webhookAccessSource),
});
