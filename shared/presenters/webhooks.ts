/** Webhook presentation, above the domain: endpoints and their deliveries, typed by their response schemas. */
import type { z } from 'zod';
import type { DeliveryRecord, WebhookRecord } from '#shared/domain/webhooks/entity.ts';
import type { DeliveryRecordSchema, WebhookCreatedRecordSchema, WebhookRecordSchema } from '#shared/schemas/webhooks.ts';

type Wire<S extends z.ZodType> = z.infer<S>;

/** The endpoint as every webhook route returns it (the create adds `secret`: presentCreatedWebhook). */
export const presentWebhook = (w: WebhookRecord): Wire<typeof WebhookRecordSchema> => ({
  uuid: w.uuid,
  url: w.url,
  events: w.events,
  description: w.description,
  status: w.status,
  created_at: w.created_at,
  updated_at: w.updated_at,
});

/** The create's record: the endpoint with its signing `secret`, shown only here. */
export const presentCreatedWebhook = (w: WebhookRecord, secret: string): Wire<typeof WebhookCreatedRecordSchema> => {
  const { created_at, updated_at, ...fields } = presentWebhook(w);
  return { ...fields, secret, created_at, updated_at };
};

export const presentDelivery = (d: DeliveryRecord): Wire<typeof DeliveryRecordSchema> => ({
  uuid: d.uuid,
  event_id: d.event_id,
  event_type: d.event_type,
  status: d.status,
  attempts: d.attempts,
  last_status_code: d.last_status_code,
  last_error: d.last_error,
  next_attempt_at: d.next_attempt_at,
  created_at: d.created_at,
  delivered_at: d.delivered_at,
});
