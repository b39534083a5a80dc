import { createHash } from 'node:crypto';
import { isAdmin } from '#shared/auth/caller.ts';
import { secretBox } from '#shared/auth/secret-box.ts';
import { nowIso } from '#shared/clock.ts';
import { runCommand } from '#shared/command/run.ts';
import { committedUnlessConditionFails } from '#shared/db/conflict-retries.ts';
import { accept } from '#shared/decision.ts';
import type { Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { BatchRead, getEntity } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import {
  deliveryEntity,
  deliveryLists,
  WEBHOOK_DELIVERY_QUEUE,
  webhookEntity,
  type DeliveryMessage,
  type DeliveryRecord,
  type WebhookRecord,
} from '#shared/domain/webhooks/entity.ts';
import type { IdentifiedEvent } from '#shared/domain/webhooks/events.ts';
import { disableIfCreatorLostAccess, failingNotice, readWebhookCreator, webhookDisabledNotices } from '#shared/domain/webhooks/disable.ts';
import { decideHealth, decideRedeliver, holdsWebhookRights } from '#shared/domain/webhooks/decide.ts';
import { postWebhook, type PostOutcome } from '#shared/domain/webhooks/post.ts';
import { requireAdmin, secretContext, showWebhook, tenantWebhooks } from '#shared/domain/webhooks/service.ts';
import { webhookSettings } from '#shared/domain/webhooks/settings.ts';
import { webhookHeaders } from '#shared/domain/webhooks/signature.ts';
import { resolveSafeTarget } from '#shared/outbound/url-safety.ts';
import { ConcurrentUpdateError } from '#shared/errors.ts';
import { runList } from '#shared/list/engine.ts';
import type { ListResource } from '#shared/list/resource.ts';
import type { QueueSender } from '#shared/queue/queue.ts';

/*
 * Delivery life cycle: created `pending` by the events projection (one per event and subscribed endpoint, at a
 * uuid derived from both, so a replayed change finds it instead of making a second), attempted by the worker,
 * retried on the back-off schedule, then `succeeded` or `failed`; `redeliver` starts a new round. Each queue
 * message carries the delivery's `seq`: a message older than the item's seq (a duplicate, or one overtaken by a
 * redeliver) does nothing, so one delivery has one message in play at a time.
 */

/** A uuid-shaped id derived from the endpoint and the event: same pair, same delivery. */
export function deliveryUuid(webhookUuid: string, eventId: string): string {
  const h = createHash('sha256').update(`${webhookUuid}\n${eventId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const subscribed = (w: WebhookRecord, type: string) => w.status === 'active' && (w.events.includes('*') || w.events.includes(type));

const message = (tenantId: string, d: DeliveryRecord, notBefore: number): DeliveryMessage => ({
  version: 1,
  tenant_uuid: tenantId,
  webhook_uuid: d.webhook_uuid,
  delivery_uuid: d.uuid,
  seq: d.seq,
  not_before: notBefore,
});

/** SQS delays stop at 15 minutes; a longer wait is re-queued by the worker until `not_before`. */
const MAX_QUEUE_DELAY_SECONDS = 900;
const delayUntil = (notBefore: number) => Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(0, Math.ceil((notBefore - Date.now()) / 1000)));

/**
 * Fans the events of one change out to the tenant's subscribed endpoints: a delivery item each, then its
 * queue message. Re-running it (a retried stream record) finds the deliveries; one never attempted is queued
 * again (its first message may have been lost with a crash), others are left alone.
 */
export async function fanOut(ctx: DataCtx, events: IdentifiedEvent[], queue: QueueSender): Promise<number> {
  if (events.length === 0) return 0;
  const endpoints = await tenantWebhooks(ctx);
  let made = 0;
  for (const { id, event } of events) {
    const body = JSON.stringify(event);
    for (const w of endpoints.filter((e) => subscribed(e, event.type))) {
      const now = nowIso();
      const d: DeliveryRecord = {
        uuid: deliveryUuid(w.uuid, id),
        webhook_uuid: w.uuid,
        event_id: id,
        event_type: event.type,
        status: 'pending',
        attempts: 0,
        last_status_code: null,
        last_error: null,
        next_attempt_at: now,
        delivered_at: null,
        body,
        round_attempts: 0,
        seq: 0,
        claim: null,
        created_at: now,
        updated_at: now,
      };
      let toSend: DeliveryRecord | undefined = d;
      // a failed condition: the delivery exists (a replayed change)
      if (!(await committedUnlessConditionFails(() => new WriteTx(ctx).create(deliveryEntity, d)))) {
        const existing = await getEntity(ctx, deliveryEntity, d.uuid, true);
        if (!existing) throw new ConcurrentUpdateError();
        const e = existing.record;
        toSend = e.status === 'pending' && e.attempts === 0 && e.seq === 0 && !e.claim ? e : undefined;
      }
      if (toSend) {
        await queue.send(WEBHOOK_DELIVERY_QUEUE, message(ctx.tenantId, toSend, Date.now()));
        made++;
      }
    }
  }
  return made;
}

const deliveryResource = (webhookUuid: string): ListResource<DeliveryRecord> => ({
  type: 'webhook_delivery',
  entity: deliveryEntity,
  lists: deliveryLists(webhookUuid),
  attributes: {
    uuid: { type: 'string', get: (d) => d.uuid },
    event_id: { type: 'string', get: (d) => d.event_id },
    event_type: { type: 'string', get: (d) => d.event_type },
    status: { type: 'string', get: (d) => d.status },
    created_at: { type: 'timestamp', get: (d) => d.created_at },
  },
});

/** An endpoint's deliveries, newest first unless `q[s]` says otherwise (404 for an unknown endpoint). */
export async function listDeliveries(ctx: DomainCtx, webhookId: string, pairs: Array<[string, string]>) {
  const sorted = pairs.some(([k]) => k === 'q[s]') ? pairs : [...pairs, ['q[s]', 'created_at desc'] as [string, string]];
  // the endpoint (404, admins only) is looked up once the query has parsed; its uuid is the path's (lower-cased)
  return runList(deliveryResource(webhookId), { ctx, loader: ctx.loader, pairs: sorted, afterParse: () => showWebhook(ctx, webhookId) });
}

/**
 * Sends a delivery again, whatever its state: a new round of attempts with the same event id and body.
 * The message is queued before the write, carrying the seq the write makes current; if the write loses a
 * race, that message is stale and does nothing, and the retry queues another.
 */
export async function redeliver(ctx: DomainCtx, webhookId: string, deliveryId: string, queue: QueueSender): Promise<DeliveryRecord> {
  requireAdmin(ctx);
  const w = await showWebhook(ctx, webhookId);
  return runCommand(ctx, {
    read: () => getEntity(ctx, deliveryEntity, deliveryId, true),
    decide: (current, now) => decideRedeliver(w, current?.record, deliveryId, now),
    write: async (tx, next, current) => {
      await queue.send(WEBHOOK_DELIVERY_QUEUE, message(ctx.tenantId, next, Date.now()));
      tx.replace(deliveryEntity, current!, next);
      return next;
    },
  });
}

export const canRedeliver = (ctx: DomainCtx) => isAdmin(ctx.caller);

// ---------- the worker's side ----------

/** A delivery's `last_error` when its endpoint's creator no longer holds the rights (the endpoint is disabled with it). */
export const CREATOR_REFUSAL = 'webhook disabled: its creator is no longer an active admin';

export interface AttemptDeps {
  queue: QueueSender;
  post?: typeof postWebhook;
  now?: () => number;
}

export type AttemptResult = { outcome: 'stale' | 'deferred' | 'succeeded' | 'retrying' | 'failed'; status_code?: number | null };

/** How long a worker waits for the write that queued a message it found ahead of its delivery (longer than any write runs). */
const WRITE_WAIT_MS = 60_000;
/** How often it looks again meanwhile. */
const WRITE_WAIT_RETRY_SECONDS = 1;

/**
 * One message of the delivery queue: at most one POST. The outcome is written conditioned on the version
 * read; the next retry's message is queued before that write, so a crash between them leaves either a stale
 * message (dropped) or the current one redelivered by SQS (the attempt repeated: at least once).
 *
 * A retry's or a redeliver's message is queued before its write, so a worker may take it before the write lands
 * (a write slowed by a busy table outlasts a queue's pickup): the delivery then shows an older `seq`. That is not
 * stale: the message is looked at again each second until the write lands, for at most WRITE_WAIT_MS (a write
 * that never landed left nothing to send).
 */
export async function attemptDelivery(ctx: DataCtx, msg: DeliveryMessage, messageId: string, deps: AttemptDeps): Promise<AttemptResult> {
  const now = deps.now ?? Date.now;
  // the delivery and its endpoint in one round trip (the endpoint's id is the message's)
  const read = new BatchRead(ctx);
  const deliveryOf = read.entities(deliveryEntity, [msg.delivery_uuid]);
  const endpointOf = read.entities(webhookEntity, [msg.webhook_uuid]);
  await read.run();
  let stored = deliveryOf().get(msg.delivery_uuid);
  if (stored && stored.record.seq < msg.seq) {
    const until = msg.awaits_write_until ?? now() + WRITE_WAIT_MS;
    if (now() >= until) return { outcome: 'stale' };
    await deps.queue.send(WEBHOOK_DELIVERY_QUEUE, { ...msg, awaits_write_until: until }, { delaySeconds: WRITE_WAIT_RETRY_SECONDS });
    return { outcome: 'deferred' };
  }
  if (stored?.record.status !== 'pending' || stored.record.seq !== msg.seq) return { outcome: 'stale' };
  if (msg.not_before > now() + 500) {
    await deps.queue.send(WEBHOOK_DELIVERY_QUEUE, msg, { delaySeconds: delayUntil(msg.not_before) });
    return { outcome: 'deferred' };
  }
  if (stored.record.claim && stored.record.claim !== messageId) return { outcome: 'stale' };
  if (!stored.record.claim) {
    const claimed = { ...stored.record, claim: messageId };
    // a failed condition: a duplicate message claimed it first
    if (!(await committedUnlessConditionFails(() => new WriteTx(ctx).replace(deliveryEntity, stored!, claimed))))
      return { outcome: 'stale' };
    stored = { record: claimed, version: stored.version + 1 };
  }
  const endpoint = endpointOf().get(msg.webhook_uuid);
  let outcome: PostOutcome;
  if (!endpoint) return finish(ctx, stored, { ok: false, statusCode: null, error: 'webhook deleted' }, deps, true);
  if (endpoint.record.status !== 'active')
    return finish(ctx, stored, { ok: false, statusCode: null, error: 'webhook disabled' }, deps, true);
  // Its creator's rights, checked before every POST: an event in flight when the creator was demoted or
  // deactivated, before the creators projection disabled the endpoint, is not sent either.
  const creator = await readWebhookCreator(ctx, endpoint.record.creator_uuid);
  if (!holdsWebhookRights(creator.record)) {
    await disableIfCreatorLostAccess(ctx, endpoint.record.uuid, () => new Date(now()).toISOString(), endpoint.record.creator_uuid);
    return finish(ctx, stored, { ok: false, statusCode: null, error: CREATOR_REFUSAL }, deps, true);
  }
  try {
    const target = await resolveSafeTarget(endpoint.record.url);
    const secret = await secretBox().open(endpoint.record.secret_sealed, secretContext(ctx.tenantId, endpoint.record.uuid));
    outcome = await (deps.post ?? postWebhook)(
      target,
      stored.record.body,
      webhookHeaders(secret, stored.record.event_id, stored.record.body, now()),
      { timeoutMs: webhookSettings.timeoutMs, bodyCap: webhookSettings.responseBodyCap },
    );
  } catch (err) {
    outcome = { ok: false, statusCode: null, error: (err as Error).message };
  }
  const result = await finish(ctx, stored, outcome, deps, false);
  await recordHealth(ctx, endpoint, outcome.ok, now());
  return result;
}

async function finish(
  ctx: DataCtx,
  stored: Stored<DeliveryRecord>,
  outcome: PostOutcome,
  deps: AttemptDeps,
  final: boolean,
): Promise<AttemptResult> {
  const d = stored.record;
  const nowMs = (deps.now ?? Date.now)();
  const at = new Date(nowMs).toISOString();
  const schedule = webhookSettings.retrySchedule;
  const retryIn = !outcome.ok && !final ? schedule[d.round_attempts] : undefined;
  const next: DeliveryRecord = {
    ...d,
    attempts: d.attempts + (final ? 0 : 1),
    round_attempts: d.round_attempts + (final ? 0 : 1),
    last_status_code: outcome.statusCode ?? (final ? d.last_status_code : null),
    last_error: outcome.error,
    claim: null,
    updated_at: at,
    ...(outcome.ok
      ? { status: 'succeeded' as const, delivered_at: at, next_attempt_at: null }
      : retryIn !== undefined
        ? { status: 'pending' as const, next_attempt_at: new Date(nowMs + retryIn * 1000).toISOString(), seq: d.seq + 1 }
        : { status: 'failed' as const, next_attempt_at: null }),
  };
  if (retryIn !== undefined) {
    const notBefore = nowMs + retryIn * 1000;
    await deps.queue.send(WEBHOOK_DELIVERY_QUEUE, message(ctx.tenantId, next, notBefore), { delaySeconds: delayUntil(notBefore) });
  }
  // a failed condition: a redeliver moved the delivery on meanwhile; its round stands, this attempt's record does not
  if (!(await committedUnlessConditionFails(() => new WriteTx(ctx).replace(deliveryEntity, stored, next)))) return { outcome: 'stale' };
  return {
    outcome: next.status === 'succeeded' ? 'succeeded' : next.status === 'failed' ? 'failed' : 'retrying',
    status_code: outcome.statusCode,
  };
}

/**
 * The endpoint's failure clock after an attempt (decideHealth), as a command: the endpoint as the attempt read
 * it first, read again only after a lost race (an attempt beside it moved the clock: decided again on what it
 * wrote); disabling tells the tenant's admins in the same transaction.
 */
async function recordHealth(ctx: DataCtx, endpoint: Stored<WebhookRecord>, ok: boolean, nowMs: number): Promise<void> {
  const at = new Date(nowMs).toISOString();
  await runCommand(ctx, {
    clock: { now: () => at },
    read: ({ attempt }) => (attempt === 0 ? Promise.resolve(endpoint) : getEntity(ctx, webhookEntity, endpoint.record.uuid, true)),
    decide: (current, now) => (current ? decideHealth(current.record, ok, now, webhookSettings.disableAfterMs) : accept(undefined)),
    write: async (tx, next, current) => {
      if (!next || !current) return;
      tx.replace(webhookEntity, current, next.endpoint);
      if (next.disabled) await webhookDisabledNotices(ctx, tx, current.record, at, failingNotice(current.record));
    },
  });
}
