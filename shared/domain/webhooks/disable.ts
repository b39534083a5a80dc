import type { DataCtx } from '#shared/db/model.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import { notificationEntity, type NotificationRecord } from '#shared/domain/sharing/entity.ts';
import { userListResource } from '#shared/domain/users/list.ts';
import type { WebhookRecord } from '#shared/domain/webhooks/entity.ts';
import { runList } from '#shared/list/engine.ts';
import { Loader } from '#shared/list/entity-cache.ts';

/** The notice kind an admin finds in `GET /notifications` when an endpoint was disabled for failing. */
export const WEBHOOK_DISABLED_KIND = 'webhook.disabled';

/** Admins told at most (the notices share one transaction with the disabling write: 100 items). */
const MAX_NOTIFIED_ADMINS = 50;

/**
 * One in-app notification per active admin of the tenant, added to the transaction that disables the
 * endpoint: the notices exist exactly when the endpoint was disabled. The notification record is the
 * access-request notice's shape with the webhook as subject and no shareable.
 */
export async function webhookDisabledNotices(ctx: DataCtx, tx: WriteTx, w: WebhookRecord, now: string): Promise<void> {
  const admins = await runList(userListResource, { ctx, loader: new Loader(ctx), pairs: [['q[role_eq]', 'admin'], ['q[status_eq]', 'active'], ['per_page', String(MAX_NOTIFIED_ADMINS)]] });
  for (const admin of admins.records) {
    const note = {
      uuid: crypto.randomUUID(),
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
      message: `Webhook ${w.url} was disabled: every delivery attempt failed since ${w.failing_since}. Fix the receiver, then set its status to active and redeliver what it missed.`,
      email_sent_at: null,
      created_at: now,
      updated_at: now,
    };
    tx.create(notificationEntity, note as unknown as NotificationRecord);
  }
}
