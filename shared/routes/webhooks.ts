import { WEBHOOK_DELIVERY_CONCURRENCY, WEBHOOK_DELIVERY_QUEUE, WEBHOOK_WORKER_TIMEOUT_SECONDS } from '#shared/domain/webhooks/entity.ts';
import type { Route, Worker } from '#shared/routes/types.ts';
import {
  DeliveryListResponse,
  RedeliverResponse,
  WebhookCreateBody,
  WebhookCreatedResponse,
  WebhookListResponse,
  WebhookResponse,
  WebhookUpdateBody,
} from '#shared/schemas/webhooks.ts';

const tag = 'webhooks';
const extension = true;

/** Outbound webhooks (contract section 12), admins only. Events reach them from the change stream (shared/stream/projections/events.ts). */
export const webhookRoutes: Route[] = [
  {
    method: 'GET',
    path: '/webhooks',
    handler: 'functions/webhooks/list.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'webhooks',
    table: 'read',
    doc: {
      summary: "The tenant's webhook endpoints (admins), oldest first",
      tag,
      extension,
      list: true,
      success: { status: 200, schema: WebhookListResponse },
    },
  },
  {
    method: 'POST',
    path: '/webhooks',
    handler: 'functions/webhooks/create.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'webhooks',
    table: 'write',
    needs: ['kms:webhook-secrets'],
    doc: {
      summary:
        'Register a webhook endpoint (admins). The signing secret is in this response only; the url must be https and resolve to a public address (422)',
      tag,
      extension,
      body: WebhookCreateBody,
      success: { status: 201, schema: WebhookCreatedResponse },
    },
  },
  {
    method: 'GET',
    path: '/webhooks/{id}',
    handler: 'functions/webhooks/get.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'webhooks',
    table: 'read',
    doc: {
      summary: 'Get a webhook endpoint (admins; never its secret)',
      tag,
      extension,
      success: { status: 200, schema: WebhookResponse },
    },
  },
  {
    method: 'PUT',
    path: '/webhooks/{id}',
    handler: 'functions/webhooks/update.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'webhooks',
    table: 'write',
    doc: {
      summary: 'Update a webhook endpoint: url, events, description, status (admins)',
      tag,
      extension,
      body: WebhookUpdateBody,
      success: { status: 200, schema: WebhookResponse },
    },
  },
  {
    method: 'DELETE',
    path: '/webhooks/{id}',
    handler: 'functions/webhooks/delete.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'webhooks',
    table: 'write',
    doc: { summary: 'Delete a webhook endpoint (admins); returns it', tag, extension, success: { status: 200, schema: WebhookResponse } },
  },
  {
    method: 'GET',
    path: '/webhooks/{id}/deliveries',
    handler: 'functions/webhooks/deliveries.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'webhooks',
    table: 'read',
    doc: {
      summary: "An endpoint's delivery log (admins), newest first",
      tag,
      extension,
      list: true,
      success: { status: 200, schema: DeliveryListResponse },
    },
  },
  {
    method: 'POST',
    path: '/webhooks/{id}/deliveries/{delivery_uuid}/redeliver',
    handler: 'functions/webhooks/redeliver.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'webhooks',
    table: 'write',
    sendsTo: [WEBHOOK_DELIVERY_QUEUE],
    doc: {
      summary:
        'Send a delivery again, with the same webhook-id and body: a new round of attempts (admins; 422 while the endpoint is disabled)',
      tag,
      extension,
      success: { status: 202, schema: RedeliverResponse },
    },
  },
];

export const webhookWorkers: Worker[] = [
  // One signed POST per message (10 s timeout each); a batch's records to different endpoints run at once, those
  // to one endpoint one after another (functions/workers/webhook-deliver.ts), so an endpoint has at most one
  // delivery in flight per batch and WEBHOOK_DELIVERY_CONCURRENCY in all. Retries are
  // new delayed messages, so receives beyond one mean a crash.
  {
    queue: WEBHOOK_DELIVERY_QUEUE,
    handler: 'functions/workers/webhook-deliver.ts',
    maxReceiveCount: 5,
    batchSize: 10,
    timeoutSeconds: WEBHOOK_WORKER_TIMEOUT_SECONDS,
    table: 'write',
    sendsTo: [WEBHOOK_DELIVERY_QUEUE],
    needs: ['kms:webhook-secrets'],
    maxConcurrency: WEBHOOK_DELIVERY_CONCURRENCY,
  },
];
