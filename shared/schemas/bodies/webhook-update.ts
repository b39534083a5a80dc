import * as z from 'zod';
import { WEBHOOK_STATUSES } from '#shared/domain/webhooks/entity.ts';
import { description, events, url } from '#shared/schemas/bodies/webhook-fields.ts';

export const WebhookUpdateBody = z
  .strictObject({
    url: url.optional(),
    events: events.optional(),
    description: description.optional(),
    status: z.enum(WEBHOOK_STATUSES).optional(),
  })
  .meta({
    id: 'WebhookUpdateBody',
    description:
      "Setting status back to active restarts the failure clock and makes the caller the webhook's creator (it sends only while its creator is an active admin).",
  });
