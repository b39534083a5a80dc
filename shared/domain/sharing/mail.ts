import { nowIso } from '#shared/clock.ts';
import type { Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { committedUnlessConditionFails } from '#shared/db/conflict-retries.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { notificationEntity, type NotificationKind, type NotificationRecord } from '#shared/domain/sharing/entity.ts';
import type { Level, ShareablePath } from '#shared/domain/sharing/types.ts';
import { userEntity, type UserRecord } from '#shared/domain/users/entity.ts';
import type { Email } from '#shared/email/mailer.ts';
import type { Log } from '#shared/logger.ts';

/** The queue between the access-request endpoints and the e-mail worker (shared/routes/sharing.ts). */
export const ACCESS_REQUEST_QUEUE = 'access-request-notifications';

/**
 * One message per access request event. It names each recipient's in-app notification: the worker marks
 * the notification (`email_sent_at`) once its e-mail went out, and skips notifications already marked, so a
 * redelivered message or a retried batch does not e-mail the same recipient twice.
 */
export interface AccessRequestEmailMessage {
  version: 1;
  tenant_uuid: string;
  event: NotificationKind;
  access_request_uuid: string;
  shareable: { type: ShareablePath; uuid: string; title: string };
  requester: { uuid: string; display_name: string; email: string };
  requested_level: Level;
  message: string | null;
  deliveries: Array<{ recipient_uuid: string; notification_uuid: string }>;
}

/** What delivering needs from one tenant's data: the worker's seam (fakes in unit tests). */
export interface InboxPort {
  /** A notification with its version, read consistently (it was committed just before the message was sent). */
  notification(uuid: string): Promise<Stored<NotificationRecord> | undefined>;
  /** The users found among `uuids`, by uuid. */
  users(uuids: string[]): Promise<Map<string, UserRecord>>;
  /** Marks the notification e-mailed, conditioned on the version read: no second read before the write. */
  markEmailed(note: Stored<NotificationRecord>, at: string): Promise<void>;
}

export interface MailDeps {
  inbox(tenantId: string): Promise<InboxPort>;
  send(email: Email): Promise<string>;
  log?: Pick<Log, 'info' | 'warn' | 'error'>;
}

/** The port over the table, confined to the message's tenant like any request. */
export function storeInbox(ctx: DataCtx): InboxPort {
  return {
    notification: (uuid) => getEntity(ctx, notificationEntity, uuid, true),
    users: async (uuids) => new Map([...(await getEntities(ctx, userEntity, uuids)).values()].map((u) => [u.record.uuid, u.record])),
    async markEmailed(note, at) {
      // a failed condition: a duplicate delivery of the message marked it first (only this mark rewrites a notice)
      await committedUnlessConditionFails(() =>
        new WriteTx(ctx).replace(notificationEntity, note, { ...note.record, email_sent_at: at, updated_at: at }),
      );
    },
  };
}

export function accessRequestEmail(msg: AccessRequestEmailMessage, to: string): Email {
  const reminder = msg.event === 'access_request.resent';
  const subject = `${reminder ? 'Reminder: ' : ''}${msg.requester.display_name} requests ${msg.requested_level} access to "${msg.shareable.title}"`;
  const text = [
    `${msg.requester.display_name} (${msg.requester.email}) asks for ${msg.requested_level} access to "${msg.shareable.title}" (${msg.shareable.type}/${msg.shareable.uuid}).`,
    ...(msg.message ? ['', `Their message: ${msg.message}`] : []),
    '',
    "Grant access from the resource's sharing settings; the request is resolved automatically once a grant covers it.",
  ].join('\n');
  return { to: [to], subject, text };
}

/**
 * Sends the e-mails of one message, one per recipient. Already-sent notifications are skipped; recipients
 * that no longer exist or are inactive get none. Reads: each notification (consistent), then the recipients
 * still to e-mail in one batch; writes: one conditional mark per e-mail sent. At-least-once: a crash between
 * sending and marking sends that one e-mail again on redelivery (accepted; the marker makes every other
 * retry idempotent). Throws on a failed send or mark, so the queue redelivers the message (functions/workers).
 */
export async function deliverAccessRequestEmails(
  msg: AccessRequestEmailMessage,
  deps: Pick<MailDeps, 'inbox' | 'send'>,
): Promise<{ access_request_uuid: string; sent: number; skipped: number }> {
  const inbox = await deps.inbox(msg.tenant_uuid);
  const notes = await Promise.all(msg.deliveries.map((d) => inbox.notification(d.notification_uuid)));
  const due = notes.filter((n): n is Stored<NotificationRecord> => !!n && !n.record.email_sent_at);
  const users = due.length ? await inbox.users(due.map((n) => n.record.recipient_uuid)) : new Map<string, UserRecord>();
  let sent = 0;
  for (const note of due) {
    const user = users.get(note.record.recipient_uuid);
    if (user?.status !== 'active') continue;
    await deps.send(accessRequestEmail(msg, user.email));
    await inbox.markEmailed(note, nowIso());
    sent++;
  }
  return { access_request_uuid: msg.access_request_uuid, sent, skipped: msg.deliveries.length - sent };
}
