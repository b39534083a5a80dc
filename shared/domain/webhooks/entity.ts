import type { BaseRecord, EntityDef } from '#shared/db/model.ts';

/** The event types of contract section 12. */
export const EVENT_TYPES = [
  'goal.created',
  'goal.updated',
  'goal.deleted',
  'goal.progress_changed',
  'checkin.created',
  'checkin.updated',
  'checkin.deleted',
  'access_request.created',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const WEBHOOK_STATUSES = ['active', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** A registered endpoint. The signing secret is stored only sealed (KMS deployed, a local key file locally). */
export interface WebhookRecord extends BaseRecord {
  url: string;
  /** Event types, or `["*"]` for all. */
  events: string[];
  description: string | null;
  status: WebhookStatus;
  secret_sealed: string;
  creator_uuid: string;
  /** Start of the current run of failed attempts (null after any success): 24 h of only failures disables the endpoint. */
  failing_since: string | null;
  disabled_reason: string | null;
}

/** At most this many endpoints per tenant: every event reads them all to fan out. */
export const MAX_WEBHOOKS_PER_TENANT = 50;

export const webhookEntity: EntityDef<WebhookRecord> = { type: 'webhook' };

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One event to one endpoint, with every attempt's outcome; the body is kept so every retry sends the same bytes. */
export interface DeliveryRecord extends BaseRecord {
  webhook_uuid: string;
  event_id: string;
  event_type: EventType;
  status: DeliveryStatus;
  /** Attempts made, redeliveries included. */
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  /** The event JSON exactly as signed and sent. */
  body: string;
  /** Attempts of the current round (reset by redeliver): indexes the back-off schedule. */
  round_attempts: number;
  /** Bumped whenever a new queue message is issued for this delivery; a message carrying an older value is stale. */
  seq: number;
  /**
   * The queue message that took the current attempt (null until one does). A duplicate message of the same
   * seq finds another message's claim and does nothing; SQS redelivering the claimer itself (a crash) goes on.
   */
  claim: string | null;
}

/**
 * Deliveries are listed per endpoint, newest first. One endpoint can receive every event of a large tenant,
 * so its list is spread over 16 partitions (last hex digit of the delivery uuid) that the list engine merges.
 */
export const DELIVERY_SHARDS = 16;
export const deliveryList = (webhookUuid: string, shard: number) => `webhook_delivery#${webhookUuid}#${shard}`;
export const deliveryLists = (webhookUuid: string) => Array.from({ length: DELIVERY_SHARDS }, (_, i) => deliveryList(webhookUuid, i));

export const deliveryEntity: EntityDef<DeliveryRecord> = {
  type: 'webhook_delivery',
  listName: (d) => deliveryList(d.webhook_uuid, parseInt(d.uuid.slice(-1), 16) % DELIVERY_SHARDS),
  // The delivery log keeps 30 days (docs/webhooks.md); the table's TTL removes older deliveries.
  expiresAt: (d) => Math.floor(Date.parse(d.created_at) / 1000) + DELIVERY_LOG_DAYS * 86_400,
};

export const DELIVERY_LOG_DAYS = 30;

/** What a delivery queue message carries; everything else is read from the delivery item. */
export interface DeliveryMessage {
  version: 1;
  tenant_uuid: string;
  webhook_uuid: string;
  delivery_uuid: string;
  seq: number;
  /** Epoch ms before which the attempt must not be made (SQS delays top out at 15 minutes). */
  not_before: number;
  /**
   * Epoch ms until which a worker that finds the delivery behind this message (its `seq` lower) waits for the
   * write that queued it: set by the first such worker (attemptDelivery).
   */
  awaits_write_until?: number;
}

export const WEBHOOK_DELIVERY_QUEUE = 'webhook-deliveries';

/**
 * Delivery worker batches at once, across tenants (the event source's maximum concurrency, the worker row's
 * `maxConcurrency`). A batch runs one delivery at a time per endpoint (its lane), so this is also the most
 * deliveries one endpoint has in flight: a burst, or an import of 10,000 goals, reaches a receiver at most this
 * many requests at once.
 */
export const WEBHOOK_DELIVERY_CONCURRENCY = 10;

/** The delivery worker's timeout: a batch's lanes fit their attempts (10 s each at most) into it. */
export const WEBHOOK_WORKER_TIMEOUT_SECONDS = 30;
