import { isAdmin } from '#shared/auth/caller.ts';
import { newId } from '#shared/ids.ts';
import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import { secretBox } from '#shared/auth/secret-box.ts';
import { keys } from '#shared/db/keys.ts';
import { createdOrStored, getEntities, getEntity, getSide, mutateEntity, nowIso, partitionEntries, retryOnConflict, WriteTx, type DataCtx } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { sentFields } from '#shared/domain/fields.ts';
import { MAX_WEBHOOKS_PER_TENANT, webhookEntity, type EventType, type WebhookRecord, type WebhookStatus } from '#shared/domain/webhooks/entity.ts';
import { newWebhookSecret } from '#shared/domain/webhooks/signature.ts';
import { resolveSafeTarget } from '#shared/domain/webhooks/url-safety.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '#shared/errors.ts';

/*
 * Webhook endpoints (contract section 12): admins only, in every verb. The secret is returned once, by the
 * create, and stored sealed; nothing else ever reads it back except the delivery worker.
 */

const notFound = (id: string) => new NotFoundError('Webhook', id);

export function requireAdmin(ctx: DomainCtx): void {
  if (!isAdmin(ctx.caller)) throw new ForbiddenError('Only admins manage webhooks');
}

/** The secret's sealing is bound to its tenant and endpoint: a sealed value copied elsewhere does not open. */
export const secretContext = (tenantId: string, webhookUuid: string) => ({ tenant_uuid: tenantId, webhook_uuid: webhookUuid });

/** Registration check of a URL (422 on `url`): its shape, and deployed, that it resolves only to public addresses. */
async function checkUrl(url: string): Promise<void> {
  try {
    await resolveSafeTarget(url);
  } catch (err) {
    throw ValidationError.field('url', 'unsafe_url', (err as Error).message);
  }
}

/** Every endpoint of the tenant (at most MAX_WEBHOOKS_PER_TENANT): one Query of the list, then their items. */
export async function tenantWebhooks(ctx: DataCtx): Promise<WebhookRecord[]> {
  const ids: string[] = [];
  for await (const e of partitionEntries(ctx, keys.entityList(ctx.tenantId, webhookEntity.type))) ids.push(e.id);
  if (ids.length === 0) return [];
  const found = await getEntities(ctx, webhookEntity, ids, true);
  return ids.flatMap((id) => (found.has(id) ? [found.get(id)!.record] : []));
}

/**
 * The tenant's endpoint count, kept in one side item that every create and delete writes in its transaction:
 * a create commits only if the count is still the one it read (else it retries), so concurrent creates cannot
 * pass the cap together. A tenant without the item (endpoints from before it) starts from its list.
 */
const countKey = (ctx: DataCtx) => keys.misc(ctx.tenantId, 'webhook_count', 'all');

async function countOneMore(ctx: DataCtx, tx: WriteTx): Promise<void> {
  const counter = await getSide(ctx, countKey(ctx));
  const count = counter ? Number(counter.n) : (await tenantWebhooks(ctx)).length;
  if (count >= MAX_WEBHOOKS_PER_TENANT) throw ValidationError.field('url', 'too_many', `A tenant has at most ${MAX_WEBHOOKS_PER_TENANT} webhooks`);
  if (counter) tx.updateSide(countKey(ctx), { set: {}, add: { n: 1 }, if: { equals: { n: count } } });
  else tx.putSide(countKey(ctx), { n: count + 1 }, { if: { exists: false } });
}

/** The domain's webhook commands (the webhook body schemas validate the wire and map to these). */
export interface WebhookCreateInput {
  url: string;
  events: Array<EventType | '*'>;
  description?: string | null;
}
export type WebhookUpdateInput = Partial<WebhookCreateInput> & { status?: WebhookStatus };

export async function createWebhook(ctx: DomainCtx, input: WebhookCreateInput): Promise<{ record: WebhookRecord; secret: string }> {
  requireAdmin(ctx);
  await checkUrl(input.url);
  const uuid = newId();
  const secret = newWebhookSecret();
  const now = nowIso();
  const record: WebhookRecord = {
    uuid,
    url: input.url,
    events: normalizeEvents(input.events),
    description: input.description ?? null,
    status: 'active',
    secret_sealed: await secretBox().seal(secret, secretContext(ctx.tenantId, uuid)),
    creator_uuid: ctx.caller.userId,
    failing_since: null,
    disabled_reason: null,
    created_at: now,
    updated_at: now,
  };
  return createdOrStored(
    ctx,
    webhookEntity,
    uuid,
    () =>
      retryOnConflict(async () => {
        const tx = new WriteTx(ctx).create(webhookEntity, record);
        await countOneMore(ctx, tx);
        await tx.commit();
        return { record, secret };
      }),
    async (stored) => ({ record: stored, secret: await secretBox().open(stored.secret_sealed, secretContext(ctx.tenantId, uuid)) }),
  );
}

/** `["*"]` alone means every type; otherwise the distinct types named. */
const normalizeEvents = (events: string[]) => (events.includes('*') ? ['*'] : [...new Set(events)]);

export async function showWebhook(ctx: DomainCtx, id: string): Promise<WebhookRecord> {
  requireAdmin(ctx);
  const found = await getEntity(ctx, webhookEntity, id);
  if (!found) throw notFound(id);
  return found.record;
}

export async function updateWebhook(ctx: DomainCtx, id: string, input: WebhookUpdateInput): Promise<WebhookRecord> {
  requireAdmin(ctx);
  const sent = sentFields(input);
  if ('url' in sent) await checkUrl(input.url!);
  const { after } = await mutateEntity(
    ctx,
    webhookEntity,
    id,
    (current) => {
      const w = current.record;
      const next: WebhookRecord = {
        ...w,
        url: input.url ?? w.url,
        events: input.events ? normalizeEvents(input.events) : w.events,
        description: 'description' in sent ? (input.description ?? null) : w.description,
        status: input.status ?? w.status,
        updated_at: nowIso(),
      };
      // Turned on again (or moved): a fresh start for the failure clock.
      if (next.status === 'active' && (w.status !== 'active' || next.url !== w.url)) Object.assign(next, { failing_since: null, disabled_reason: null });
      if (next.status === 'disabled' && w.status !== 'disabled') next.disabled_reason = 'disabled by an admin';
      return next;
    },
    () => notFound(id),
  );
  return after;
}

export async function deleteWebhook(ctx: DomainCtx, id: string): Promise<WebhookRecord> {
  requireAdmin(ctx);
  return retryOnConflict(async () => {
    const current = await getEntity(ctx, webhookEntity, id, true);
    if (!current) throw notFound(id);
    const tx = new WriteTx(ctx).remove(webhookEntity, current);
    if (await getSide(ctx, countKey(ctx))) tx.updateSide(countKey(ctx), { set: {}, add: { n: -1 } });
    await tx.commit();
    return current.record;
  });
}

export const webhookChecks = (ctx: DomainCtx): Checks => ({ can_update: isAdmin(ctx.caller), can_delete: isAdmin(ctx.caller) });
export const webhookAccessSource: AccessSource = 'admin';
export const webhookCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: isAdmin(ctx.caller) });
