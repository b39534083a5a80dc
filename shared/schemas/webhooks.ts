import * as z from 'zod';
import { DELIVERY_STATUSES, EVENT_TYPES, WEBHOOK_STATUSES } from '#shared/domain/webhooks/entity.ts';
import { listEnvelope, recordEnvelope } from '#shared/schemas/common.ts';

/** The webhook bodies are built in shared/schemas/bodies/webhook-*.ts (a handler loads its own on first use); re-exported for the route table. */
export { WebhookCreateBody } from '#shared/schemas/bodies/webhook-create.ts';
export { WebhookUpdateBody } from '#shared/schemas/bodies/webhook-update.ts';

const webhookFields = {
  uuid: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string().nullable(),
  status: z.enum(WEBHOOK_STATUSES).meta({
    description:
      'disabled by an admin, after 24 hours in which every attempt failed, or when its creator is no longer an active admin (setting it active again makes the caller its creator)',
  }),
};
export const WebhookRecordSchema = z.object({ ...webhookFields, created_at: z.string(), updated_at: z.string() }).meta({ id: 'Webhook' });
export const WebhookCreatedRecordSchema = z
  .object({
    ...webhookFields,
    secret: z
      .string()
      .meta({ description: '`whsec_` + base64 of 32 random bytes. Shown only in this response: store it to verify signatures.' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'WebhookCreated' });

export const WebhookResponse = recordEnvelope('webhook', WebhookRecordSchema);
export const WebhookCreatedResponse = recordEnvelope('webhook', WebhookCreatedRecordSchema);
export const WebhookListResponse = listEnvelope('webhook', WebhookRecordSchema);

export const DeliveryRecordSchema = z
  .object({
    uuid: z.string(),
    event_id: z.string().meta({ description: 'The webhook-id header: the same on every attempt' }),
    event_type: z.enum(EVENT_TYPES),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    next_attempt_at: z.string().nullable(),
    created_at: z.string(),
    delivered_at: z.string().nullable(),
  })
  .meta({ id: 'WebhookDelivery' });
export const DeliveryListResponse = listEnvelope('webhook_delivery', DeliveryRecordSchema);
export const RedeliverResponse = z
  .object({ data: z.object({ type: z.literal('webhook_delivery'), record: DeliveryRecordSchema }) })
  .meta({ id: 'WebhookRedeliverResponse' });
