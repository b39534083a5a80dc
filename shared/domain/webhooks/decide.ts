/**
 * Webhook endpoints: the rules of each command as pure functions (no I/O, no clock, no id or secret
 * generation). service.ts checks the URL (DNS, I/O), seals the new secret, reads the endpoint and the
 * tenant's endpoint count, calls these, and writes once.
 */
import { isAdmin, type Caller } from '#shared/auth/caller.ts';
import { accept, refuse, type Decision } from '#shared/decision.ts';
import {
  MAX_WEBHOOKS_PER_TENANT,
  type DeliveryRecord,
  type EventType,
  type WebhookRecord,
  type WebhookStatus,
} from '#shared/domain/webhooks/entity.ts';
import { ForbiddenError, NotFoundError, ValidationError, type AppError } from '#shared/errors.ts';
import { sentFields } from '#shared/domain/fields.ts';
import type { UserRecord } from '#shared/domain/users/entity.ts';

/** The domain's webhook commands (the webhook body schemas validate the wire and map to these). */
export interface WebhookCreateInput {
  url: string;
  events: Array<EventType | '*'>;
  description?: string | null;
}
export type WebhookUpdateInput = Partial<WebhookCreateInput> & { status?: WebhookStatus };

/** Admins only, in every verb (contract section 12): every command's precheck, before the URL is resolved or anything read. */
export const webhookAdminRefusal = (caller: Caller): AppError | undefined =>
  isAdmin(caller) ? undefined : new ForbiddenError('Only admins manage webhooks');

/** `["*"]` alone means every type; otherwise the distinct types named. */
export const normalizeEvents = (events: string[]): string[] => (events.includes('*') ? ['*'] : [...new Set(events)]);

/** A new endpoint, given how many the tenant has now (422 `too_many` at the cap) and its uuid and sealed secret (webhookAdminRefusal answered before). */
export function decideCreateWebhook(
  caller: Caller,
  input: WebhookCreateInput,
  endpoints: number,
  now: string,
  ids: { uuid: string; secretSealed: string },
): Decision<WebhookRecord> {
  if (endpoints >= MAX_WEBHOOKS_PER_TENANT)
    return refuse(ValidationError.field('url', 'too_many', `A tenant has at most ${MAX_WEBHOOKS_PER_TENANT} webhooks`));
  return accept({
    uuid: ids.uuid,
    url: input.url,
    events: normalizeEvents(input.events),
    description: input.description ?? null,
    status: 'active',
    secret_sealed: ids.secretSealed,
    creator_uuid: caller.userId,
    failing_since: null,
    disabled_reason: null,
    created_at: now,
    updated_at: now,
  });
}

/**
 * The endpoint after an update (`description` is changed only when the body named it: `null` clears it). Turned
 * on again, or moved to another URL, it starts the failure clock afresh; disabled by an admin, it says so.
 * Turned on again, it is the caller's: the admin who re-enables it vouches for it from then on (an endpoint
 * disabled because its creator lost the admin role would otherwise be disabled again at its next delivery).
 * webhookAdminRefusal answered before; nothing else refuses an update.
 */
export function decideUpdateWebhook(caller: Caller, w: WebhookRecord, input: WebhookUpdateInput, now: string): Decision<WebhookRecord> {
  const sent = sentFields(input);
  const next: WebhookRecord = {
    ...w,
    url: input.url ?? w.url,
    events: input.events ? normalizeEvents(input.events) : w.events,
    description: 'description' in sent ? (input.description ?? null) : w.description,
    status: input.status ?? w.status,
    updated_at: now,
  };
  if (next.status === 'active' && (w.status !== 'active' || next.url !== w.url))
    Object.assign(next, { failing_since: null, disabled_reason: null });
  if (next.status === 'active' && w.status !== 'active') next.creator_uuid = caller.userId;
  if (next.status === 'disabled' && w.status !== 'disabled') next.disabled_reason = 'disabled by an admin';
  return accept(next);
}

/**
 * An endpoint sends the tenant's every event, limited goals included, on behalf of the admin who created it: it
 * may send only while that user is an active admin (contract section 12: webhooks are admins'). A creator that no
 * longer exists holds nothing.
 */
export const holdsWebhookRights = (creator: Pick<UserRecord, 'role' | 'status'> | undefined): boolean =>
  !!creator && creator.status === 'active' && creator.role === 'admin';

/** The `disabled_reason` of an endpoint whose creator lost the rights webhooks require (kept on the item; the contract's record has no reason). */
export const CREATOR_LOST_ACCESS = 'creator_lost_access';

/** Whether a user change takes the rights away (demoted, deactivated or removed): the change the creators projection acts on. */
export const losesWebhookRights = (before: UserRecord | undefined, after: UserRecord | undefined): boolean =>
  holdsWebhookRights(before) && !holdsWebhookRights(after);

/**
 * The endpoint disabled for its creator as read now (`creator`: the user named by `creator_uuid`, undefined when
 * gone), or undefined when nothing changes: the endpoint is not active, or its creator still holds the rights.
 * Never refuses (a worker's check, not a caller's command).
 */
export function decideCreatorCheck(w: WebhookRecord, creator: UserRecord | undefined, now: string): Decision<WebhookRecord | undefined> {
  if (w.status !== 'active' || holdsWebhookRights(creator)) return accept(undefined);
  return accept({ ...w, status: 'disabled', disabled_reason: CREATOR_LOST_ACCESS, updated_at: now });
}

/**
 * The endpoint's failure clock after one delivery attempt (`ok`: it succeeded) at `now`, or undefined when
 * nothing changes: the first failure after a success starts it, a success stops it (each a write only when the
 * state flips, so a busy healthy endpoint costs nothing), and once every attempt has failed for `disableAfterMs`
 * an active endpoint is disabled (`disabled`: its admins are told in the same transaction). Never refuses.
 */
export function decideHealth(
  w: WebhookRecord,
  ok: boolean,
  now: string,
  disableAfterMs: number,
): Decision<{ endpoint: WebhookRecord; disabled: boolean } | undefined> {
  if (ok) return accept(w.failing_since ? { endpoint: { ...w, failing_since: null }, disabled: false } : undefined);
  if (!w.failing_since) return accept({ endpoint: { ...w, failing_since: now }, disabled: false });
  if (w.status !== 'active' || Date.parse(now) - Date.parse(w.failing_since) < disableAfterMs) return accept(undefined);
  const disabled = {
    ...w,
    status: 'disabled' as const,
    disabled_reason: `every delivery failed since ${w.failing_since}`,
    updated_at: now,
  };
  return accept({ endpoint: disabled, disabled: true });
}

/**
 * A redelivery of `delivery` as read (undefined, or of another endpoint: 404) on the endpoint `w`: a new round of
 * attempts with the same event id and body, under the next seq; an endpoint not active is 422 webhook_disabled.
 */
export function decideRedeliver(
  w: WebhookRecord,
  delivery: DeliveryRecord | undefined,
  deliveryId: string,
  now: string,
): Decision<DeliveryRecord> {
  if (!delivery || delivery.webhook_uuid !== w.uuid) return refuse(new NotFoundError('Delivery', deliveryId));
  if (w.status !== 'active')
    return refuse(ValidationError.field('status', 'webhook_disabled', 'This webhook is disabled; set its status to active first'));
  return accept({
    ...delivery,
    status: 'pending',
    round_attempts: 0,
    seq: delivery.seq + 1,
    claim: null,
    next_attempt_at: now,
    updated_at: now,
  });
}
