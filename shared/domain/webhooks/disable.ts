import { runCommand } from '#shared/command/run.ts';
import type { Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { addOps, checkVersionOp, createOp, replaceOp, type TxOp } from '#shared/db/tx-ops.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import { accept, decided } from '#shared/decision.ts';
import { serviceAccountAsUser, serviceAccountEntity } from '#shared/domain/service-accounts/entity.ts';
import { notificationEntity, type NotificationRecord } from '#shared/domain/sharing/entity.ts';
import { userEntity, type UserRecord } from '#shared/domain/users/entity.ts';
import { userListResource } from '#shared/domain/users/list.ts';
import { decideCreatorCheck, holdsWebhookRights } from '#shared/domain/webhooks/decide.ts';
import { webhookEntity, type WebhookRecord } from '#shared/domain/webhooks/entity.ts';
import { runList } from '#shared/list/engine.ts';
import { Loader } from '#shared/list/entity-cache.ts';

/** The notice kind an admin finds in `GET /notifications` when an endpoint was disabled (failing, or its creator lost access). */
export const WEBHOOK_DISABLED_KIND = 'webhook.disabled';

/** Admins told at most (the notices share one transaction with the disabling write: 100 items). */
const MAX_NOTIFIED_ADMINS = 50;

/** Why an endpoint was disabled, as its notice says it. */
export const failingNotice = (w: WebhookRecord) =>
  `Webhook ${w.url} was disabled: every delivery attempt failed since ${w.failing_since}. Fix the receiver, then set its status to active and redeliver what it missed.`;
export const creatorLostAccessNotice = (w: WebhookRecord, creator: UserRecord | undefined) =>
  `Webhook ${w.url} was disabled (creator_lost_access): its creator ${creator ? `${creator.display_name} <${creator.email}>` : w.creator_uuid} is no longer an active admin, and a webhook receives every event of the tenant. An admin who sets its status to active becomes its creator.`;

/**
 * One in-app notification per active admin of the tenant (but `except`), added to the transaction that disables
 * the endpoint: the notices exist exactly when the endpoint was disabled. The notification record is the
 * access-request notice's shape with the webhook as subject and no shareable.
 */
export async function webhookDisabledNotices(
  ctx: DataCtx,
  tx: WriteTx,
  w: WebhookRecord,
  now: string,
  message: string,
  except?: string,
): Promise<void> {
  const admins = await notifiedAdmins(ctx);
  addOps(tx, disabledNotices(admins, noticeUuids(admins), w, now, message, except));
}

/** One fresh notice uuid per admin told (drawn with the read, so what is written is decided purely). */
const noticeUuids = (admins: UserRecord[]) => admins.map(() => crypto.randomUUID());

/** The admins an endpoint's disabling tells: the tenant's active admins, at most MAX_NOTIFIED_ADMINS. */
async function notifiedAdmins(ctx: DataCtx): Promise<UserRecord[]> {
  const admins = await runList(userListResource, {
    ctx,
    loader: new Loader(ctx),
    pairs: [
      ['q[role_eq]', 'admin'],
      ['q[status_eq]', 'active'],
      ['per_page', String(MAX_NOTIFIED_ADMINS)],
    ],
  });
  return admins.records.filter((u) => holdsWebhookRights(u));
}

/** The notices of an endpoint's disabling, to `admins` as read (notifiedAdmins), the i-th with `uuids[i]`. */
function disabledNotices(admins: UserRecord[], uuids: string[], w: WebhookRecord, now: string, message: string, except?: string): TxOp[] {
  const out: TxOp[] = [];
  // The list reads an index, which can lag a role change: the creator who just lost the role is never told here.
  for (const [i, admin] of admins.entries()) {
    if (admin.uuid === except) continue;
    const note = {
      uuid: uuids[i]!,
      kind: WEBHOOK_DISABLED_KIND,
      recipient_uuid: admin.uuid,
      actor_uuid: null,
      actor_display_name: 'Goal tracking',
      subject_type: 'webhook',
      subject_uuid: w.uuid,
      shareable_type: null,
      shareable_uuid: null,
      shareable_title: null,
      requested_level: null,
      message,
      email_sent_at: null,
      created_at: now,
      updated_at: now,
    };
    out.push(createOp(notificationEntity, note as unknown as NotificationRecord));
  }
  return out;
}

/**
 * An endpoint's creator as webhooks judge it (`record`): its user (`user`, stored, for a version check), or for an
 * endpoint a service account created (contract section 17), the account as an admin, active while the account is
 * active and still holds the webhooks scope. Undefined when neither exists.
 */
export async function readWebhookCreator(ctx: DataCtx, uuid: string): Promise<{ record?: UserRecord; user?: Stored<UserRecord> }> {
  const user = await getEntity(ctx, userEntity, uuid, true);
  if (user) return { record: user.record, user };
  const account = (await getEntity(ctx, serviceAccountEntity, uuid, true))?.record;
  if (!account) return {};
  const record = serviceAccountAsUser(account);
  return { record: account.scopes.includes('webhooks') ? record : { ...record, status: 'inactive' } };
}

/** What a creator check reads: the endpoint, its creator, and (only when it is to be disabled) the admins to tell. */
export type CreatorCheckState =
  | {
      endpoint: Stored<WebhookRecord>;
      creator: { record?: UserRecord; user?: Stored<UserRecord> };
      admins: UserRecord[];
      noticeUuids: string[];
    }
  | undefined;

/**
 * The creator check's read: the endpoint and its creator, strongly consistent (`creatorUuid`: only while that user
 * is still its creator: an admin may have re-enabled it since, taking it over; else undefined).
 */
export async function readCreatorCheck(ctx: DataCtx, webhookUuid: string, creatorUuid?: string): Promise<CreatorCheckState> {
  const endpoint = await getEntity(ctx, webhookEntity, webhookUuid, true);
  if (!endpoint || (creatorUuid !== undefined && endpoint.record.creator_uuid !== creatorUuid)) return undefined;
  const creator = await readWebhookCreator(ctx, endpoint.record.creator_uuid);
  // the admins to tell, read only when decideCreatorCheck is to disable it (its own rule)
  const losing = endpoint.record.status === 'active' && !holdsWebhookRights(creator.record);
  const admins = losing ? await notifiedAdmins(ctx) : [];
  return { endpoint, creator, admins, noticeUuids: noticeUuids(admins) };
}

/**
 * Pure: the endpoint disabled if its creator as read no longer holds the rights (decideCreatorCheck), with the
 * admins' notices, conditioned on the endpoint's and the creator's versions read; undefined: nothing to write.
 */
export function creatorCheckWrites(seen: CreatorCheckState, at: string): TxOp[] | undefined {
  const next = seen && decided(decideCreatorCheck(seen.endpoint.record, seen.creator.record, at));
  if (!next || !seen) return undefined;
  const { endpoint, creator } = seen;
  return [
    replaceOp(webhookEntity, endpoint, next),
    ...(creator.user ? [checkVersionOp(userEntity, creator.user)] : []),
    ...disabledNotices(
      seen.admins,
      seen.noticeUuids,
      endpoint.record,
      at,
      creatorLostAccessNotice(endpoint.record, creator.record),
      endpoint.record.creator_uuid,
    ),
  ];
}

/**
 * Disables the endpoint if its creator, as read now, no longer holds the rights webhooks require (readCreatorCheck,
 * creatorCheckWrites). The admins are told in the same transaction, conditioned on the endpoint's and the
 * creator's versions read, so a re-enable or a re-promotion in between makes it read again. True when this call
 * disabled it; a replay writes nothing. The webhook-creators projection runs the same read and writes per endpoint.
 */
export async function disableIfCreatorLostAccess(
  ctx: DataCtx,
  webhookUuid: string,
  now: () => string,
  creatorUuid?: string,
): Promise<boolean> {
  return runCommand(ctx, {
    clock: { now, perAttempt: true },
    read: () => readCreatorCheck(ctx, webhookUuid, creatorUuid),
    decide: (seen, at) => accept(creatorCheckWrites(seen, at)),
    write: (tx, ops) => {
      if (!ops) return false;
      addOps(tx, ops);
      return true;
    },
  });
}
