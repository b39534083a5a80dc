import * as z from 'zod';
import { DELIVERY_STATUSES, EVENT_TYPES, WEBHOOK_STATUSES } from '#shared/domain/webhooks/entity.ts';
import { listEnvelope, nonBlank, recordEnvelope } from '#shared/schemas/common.ts';
import type { WebhookCreateInput, WebhookUpdateInput } from '#shared/domain/webhooks/decide.ts';

const url = z.string().trim().min(1, 'must not be blank').max(2048, 'must be at most 2048 characters').meta({ description: 'https URL resolving to a public address (the local stack also accepts http on 127.0.0.1 and localhost)' });
const events = z
  .array(z.enum([...EVENT_TYPES, '*']))
  .min(1, 'must name at least one event type')
  .max(EVENT_TYPES.length + 1)
  .meta({ description: 'Event types to receive, or ["*"] for every type' });
const description = nonBlank(500).nullable();

export const WebhookCreateBody = z.strictObject({ url, events, description: description.optional() }).meta({ id: 'WebhookCreateBody' });
export const WebhookUpdateBody = z
  .strictObject({ url: url.optional(), events: events.optional(), description: description.optional(), status: z.enum(WEBHOOK_STATUSES).optional() })
  .meta({ id: 'WebhookUpdateBody', description: 'Setting status back to active restarts the failure clock.' });

/** The wire bodies map onto the domain's webhook commands: a drift fails the build here. */
export const toWebhookCreateInput = (body: z.infer<typeof WebhookCreateBody>): WebhookCreateInput => body;
export const toWebhookUpdateInput = (body: z.infer<typeof WebhookUpdateBody>): WebhookUpdateInput => body;

const webhookFields = {
  uuid: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string().nullable(),
  status: z.enum(WEBHOOK_STATUSES).meta({ description: 'disabled by an admin, or after 24 hours in which every attempt failed' }),
};
export const WebhookRecordSchema = z.object({ ...webhookFields, created_at: z.string(), updated_at: z.string() }).meta({ id: 'Webhook' });
export const WebhookCreatedRecordSchema = z
  .object({ ...webhookFields, secret: z.string().meta({ description: '`whsec_` + base64 of 32 random bytes. Shown only in this response: store it to verify signatures.' }), created_at: z.string(), updated_at: z.string() })
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
export const RedeliverResponse = z.object({ data: z.object({ type: z.literal('webhook_delivery'), record: DeliveryRecordSchema }) }).meta({ id: 'WebhookRedeliverResponse' });

/** The delivery queue's message (not an API body). */
export const DeliveryMessageSchema = z.object({
  version: z.literal(1),
  tenant_uuid: z.string(),
  webhook_uuid: z.string(),
  delivery_uuid: z.string(),
  seq: z.number().int().nonnegative(),
  not_before: z.number(),
});
