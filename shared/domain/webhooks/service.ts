import { isAdmin, type Caller } from '#shared/auth/caller.ts';
import { newId } from '#shared/ids.ts';
import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import { secretBox } from '#shared/auth/secret-box.ts';
import { keys } from '#shared/db/keys.ts';
import { orStored, runCommand } from '#shared/command/run.ts';
import { partitionEntries } from '#shared/db/index-queries.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { getSide, querySide } from '#shared/db/side-items.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { entityShow } from '#shared/domain/entity-show.ts';
import { webhookEntity, type WebhookRecord } from '#shared/domain/webhooks/entity.ts';
import { accept, refuse } from '#shared/decision.ts';
import {
  decideCreateWebhook,
  decideUpdateWebhook,
  webhookAdminRefusal,
  type WebhookCreateInput,
  type WebhookUpdateInput,
} from '#shared/domain/webhooks/decide.ts';
import { newWebhookSecret } from '#shared/domain/webhooks/signature.ts';
import { resolveSafeTarget } from '#shared/outbound/url-safety.ts';
import { NotFoundError, ValidationError, type AppError } from '#shared/errors.ts';

/*
 * Webhook endpoints (contract section 12): admins only, in every verb. The secret is returned once, by the
 * create, and stored sealed; nothing else ever reads it back except the delivery worker.
 */

const notFound = (id: string) => new NotFoundError('Webhook', id);

/** Admins only, in every verb (decide.ts). */
export const requireAdmin = (ctx: DomainCtx): void => checkWebhookAdmin(ctx.caller);

/** Admins only (webhookAdminRefusal), thrown: the reads' gate and a replayed create's. */
export function checkWebhookAdmin(caller: Caller): void {
  const refusal = webhookAdminRefusal(caller);
  if (refusal) throw refusal;
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

/**
 * Every endpoint of the tenant (at most MAX_WEBHOOKS_PER_TENANT), each as it is now: the directory (one strongly
 * consistent Query: every endpoint whose create committed, as `directoryEntry` writes it beside the endpoint) and
 * the endpoint list beside it (GSI1: endpoints created before the directory; it may lag, and a deleted endpoint it
 * still names is not found), then their items. The list alone missed an endpoint created a moment ago: the events
 * of the writes that followed its create were never delivered to it.
 */
export async function tenantWebhooks(ctx: DataCtx): Promise<WebhookRecord[]> {
  const listed: string[] = [];
  const [directory] = await Promise.all([
    querySide(ctx, keys.webhookDirectory(ctx.tenantId), { consistent: true }),
    (async () => {
      for await (const e of partitionEntries(ctx, keys.entityList(ctx.tenantId, webhookEntity.type))) listed.push(e.id);
    })(),
  ]);
  const ids = [...new Set([...listed, ...directory.map((d) => d.SK)])];
  if (ids.length === 0) return [];
  const found = await getEntities(ctx, webhookEntity, ids, true);
  return ids.flatMap((id) => (found.has(id) ? [found.get(id)!.record] : []));
}

/** An endpoint's directory entry (tenantWebhooks), written in its create's transaction and removed in its delete's. */
const directoryEntry = (ctx: DataCtx, webhookUuid: string) => keys.webhookDirectoryEntry(ctx.tenantId, webhookUuid);

/**
 * The tenant's endpoint count, kept in one side item that every create and delete writes in its transaction:
 * a create commits only if the count is still the one it read (else it retries), so concurrent creates cannot
 * pass the cap together. A tenant without the item (endpoints from before it) starts from its list.
 */
const countKey = (ctx: DataCtx) => keys.misc(ctx.tenantId, 'webhook_count', 'all');

/** The tenant's endpoint count as stored (or, for a tenant without the count item, from its list). */
async function readCount(ctx: DataCtx): Promise<{ n: number; stored: boolean }> {
  const counter = await getSide(ctx, countKey(ctx));
  return counter ? { n: Number(counter.n), stored: true } : { n: (await tenantWebhooks(ctx)).length, stored: false };
}

/** One more endpoint, conditioned on the count read: concurrent creates cannot pass the cap together. */
function countOneMore(ctx: DataCtx, tx: WriteTx, count: { n: number; stored: boolean }): void {
  if (count.stored) tx.updateSide(countKey(ctx), { set: {}, add: { n: 1 }, if: { equals: { n: count.n } } });
  else tx.putSide(countKey(ctx), { n: count.n + 1 }, { if: { exists: false } });
}

export async function createWebhook(ctx: DomainCtx, input: WebhookCreateInput): Promise<{ record: WebhookRecord; secret: string }> {
  const uuid = newId();
  const secret = newWebhookSecret();
  let secretSealed = ''; // sealed once the caller may create one (the precheck): every attempt writes the same
  return runCommand(ctx, {
    precheck: async () => {
      const refusal = webhookAdminRefusal(ctx.caller); // before the URL is resolved
      if (refusal) return refusal;
      await checkUrl(input.url);
      secretSealed = await secretBox().seal(secret, secretContext(ctx.tenantId, uuid));
      return undefined;
    },
    read: () => readCount(ctx),
    decide: (count, now) => decideCreateWebhook(ctx.caller, input, count.n, now, { uuid, secretSealed }),
    write: (tx, record, count) => {
      tx.create(webhookEntity, record);
      tx.putSide(directoryEntry(ctx, record.uuid), { kind: 'webhook_ref' });
      countOneMore(ctx, tx, count);
      return { record, secret };
    },
    stored: orStored(webhookEntity, uuid, async (stored) => ({
      record: stored,
      secret: await secretBox().open(stored.secret_sealed, secretContext(ctx.tenantId, uuid)),
    })),
  });
}

/** The webhook for GET /webhooks/{id} and its deliveries: admins only (403 first), 404 when it is not in the caller's tenant. */
export const showWebhook = entityShow(webhookEntity, notFound, { byKey: true, mayRead: requireAdmin });

/** The admin check (webhookAdminRefusal) and, when the body names one, the URL's (DNS: I/O), before anything is read. */
async function webhookPrecheck(ctx: DomainCtx, url: string | undefined): Promise<AppError | undefined> {
  const refusal = webhookAdminRefusal(ctx.caller);
  if (!refusal && url !== undefined) await checkUrl(url);
  return refusal;
}

export async function updateWebhook(ctx: DomainCtx, id: string, input: WebhookUpdateInput): Promise<WebhookRecord> {
  return runCommand(ctx, {
    precheck: () => webhookPrecheck(ctx, input.url),
    read: () => getEntity(ctx, webhookEntity, id, true),
    decide: (current, now) => (current ? decideUpdateWebhook(ctx.caller, current.record, input, now) : refuse(notFound(id))),
    write: (tx, next, current) => (tx.replace(webhookEntity, current!, next), next),
  });
}

export async function deleteWebhook(ctx: DomainCtx, id: string): Promise<WebhookRecord> {
  return runCommand(ctx, {
    precheck: () => webhookPrecheck(ctx, undefined),
    read: async () => {
      const [current, counter] = await Promise.all([getEntity(ctx, webhookEntity, id, true), getSide(ctx, countKey(ctx))]);
      return current && { current, counted: !!counter };
    },
    // nothing refuses a delete an admin sends for an endpoint that exists
    decide: (s) => (s ? accept(s.current.record) : refuse(notFound(id))),
    write: (tx, record, s) => {
      tx.remove(webhookEntity, s!.current);
      tx.deleteSide(directoryEntry(ctx, record.uuid));
      if (s!.counted) tx.updateSide(countKey(ctx), { set: {}, add: { n: -1 } });
      return record;
    },
  });
}

export const webhookChecks = (ctx: DomainCtx): Checks => ({ can_update: isAdmin(ctx.caller), can_delete: isAdmin(ctx.caller) });
export const webhookAccessSource: AccessSource = 'admin';
export const webhookCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: isAdmin(ctx.caller) });
