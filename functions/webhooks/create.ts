import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { checkWebhookAdmin, createWebhook, webhookAccessSource, webhookChecks } from '#shared/domain/webhooks/service.ts';
import { presentCreatedWebhook } from '#shared/presenters/webhooks.ts';

/** 201 with the record and, this once, its secret. */
export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/webhook-create.ts').then((m) => m.WebhookCreateBody),
  sealReplays: true,
  handle: async ({ ctx, body }) => {
    const { record, secret } = await createWebhook(ctx, body);
    return recordResponse(201, 'webhook', presentCreatedWebhook(record, secret), webhookChecks(ctx), webhookAccessSource);
  },
  authorizeReplay: ({ ctx }) => checkWebhookAdmin(ctx.caller),
});
