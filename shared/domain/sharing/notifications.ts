import type { DomainCtx } from '#shared/domain/context.ts';
import { accessRequestKey, inboxList, notificationEntity, type AccessRequestRecord, type NotificationKind, type NotificationRecord, type ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { ACCESS_REQUEST_QUEUE, type AccessRequestEmailMessage } from '#shared/domain/sharing/mail.ts';
import { WriteTx } from '#shared/db/store.ts';
import { runList, type ListResource } from '#shared/list/engine.ts';
import { queueSender } from '#shared/queue/queue.ts';

/**
 * In-app notifications of an access request event, one per recipient, added to the transaction that
 * creates (or resends) the request: a notice exists exactly when the request change committed.
 */
export function addRequestNotifications(tx: WriteTx, kind: NotificationKind, request: AccessRequestRecord, shareable: ShareableRecord, actorDisplayName: string, recipients: string[], now: string): NotificationRecord[] {
  const notes = recipients.map(
    (recipient): NotificationRecord => ({
      uuid: crypto.randomUUID(),
      kind,
      recipient_uuid: recipient,
      actor_uuid: request.requester_uuid,
      actor_display_name: actorDisplayName,
      subject_type: 'access_request',
      subject_uuid: request.uuid,
      shareable_type: request.shareable_type,
      shareable_uuid: request.shareable_uuid,
      shareable_title: shareable.title,
      requested_level: request.requested_level,
      message: request.message,
      email_sent_at: null,
      created_at: now,
      updated_at: now,
    }),
  );
  for (const n of notes) tx.create(notificationEntity, n);
  return notes;
}

/**
 * Hands the e-mails of committed notifications to the worker (only workers send e-mail). Called after the
 * commit; if the queue is unreachable the in-app notices stand and the failure is logged rather than turning
 * a committed change into an error the client would retry (the retry would find nothing left to do).
 */
export async function queueRequestEmails(ctx: DomainCtx, kind: NotificationKind, request: AccessRequestRecord, shareable: ShareableRecord, notes: NotificationRecord[]): Promise<void> {
  if (notes.length === 0) return;
  const requester = ctx.caller.user;
  const message: AccessRequestEmailMessage = {
    version: 1,
    tenant_uuid: ctx.tenantId,
    event: kind,
    access_request_uuid: request.uuid,
    shareable: { type: request.shareable_type, uuid: request.shareable_uuid, title: shareable.title },
    requester: { uuid: requester.uuid, display_name: requester.display_name, email: requester.email },
    requested_level: request.requested_level,
    message: request.message,
    deliveries: notes.map((n) => ({ recipient_uuid: n.recipient_uuid, notification_uuid: n.uuid })),
  };
  try {
    await queueSender().send(ACCESS_REQUEST_QUEUE, message);
  } catch (err) {
    ctx.log.error('access request e-mail not queued; the in-app notifications were written', { access_request_uuid: request.uuid, error: (err as Error).message });
    await reopenResendWindow(ctx, request, shareable);
  }
}

/**
 * No e-mail went out, so the resend window must not count one: the request's last e-mail time goes back to
 * the epoch (only if it is still the time just written), and the requester may resend at once.
 */
async function reopenResendWindow(ctx: DomainCtx, request: AccessRequestRecord, shareable: ShareableRecord): Promise<void> {
  try {
    await new WriteTx(ctx)
      .updateSide(accessRequestKey(ctx.tenantId, shareable.type, shareable.uuid, request.requester_uuid), {
        set: { last_email_sent_at: new Date(0).toISOString() },
        add: { v: 1 },
        if: { equals: { last_email_sent_at: request.last_email_sent_at, id: request.uuid } },
      })
      .commit();
  } catch (err) {
    ctx.log.error('resend window not reopened', { access_request_uuid: request.uuid, error: (err as Error).message });
  }
}

export const presentNotification = (n: NotificationRecord) => ({
  uuid: n.uuid,
  kind: n.kind,
  recipient_uuid: n.recipient_uuid,
  actor_uuid: n.actor_uuid,
  actor_display_name: n.actor_display_name,
  subject_type: n.subject_type,
  subject_uuid: n.subject_uuid,
  shareable_type: n.shareable_type,
  shareable_uuid: n.shareable_uuid,
  shareable_title: n.shareable_title,
  requested_level: n.requested_level,
  message: n.message,
  email_sent_at: n.email_sent_at,
  created_at: n.created_at,
  updated_at: n.updated_at,
});

const inboxResource = (userUuid: string): ListResource<NotificationRecord> => ({
  type: 'notification',
  entity: notificationEntity,
  lists: [inboxList(userUuid)],
  attributes: {
    uuid: { type: 'string', get: (n) => n.uuid },
    kind: { type: 'string', get: (n) => n.kind },
    actor_uuid: { type: 'string', get: (n) => n.actor_uuid },
    subject_uuid: { type: 'string', get: (n) => n.subject_uuid },
    shareable_type: { type: 'string', get: (n) => n.shareable_type },
    shareable_uuid: { type: 'string', get: (n) => n.shareable_uuid },
    created_at: { type: 'timestamp', get: (n) => n.created_at },
  },
});

/** The caller's own notifications, newest first unless `q[s]` says otherwise, with the common list parameters. */
export function listMyNotifications(ctx: DomainCtx, pairs: Array<[string, string]>) {
  const sorted = pairs.some(([k]) => k === 'q[s]') ? pairs : [...pairs, ['q[s]', 'created_at desc'] as [string, string]];
  return runList(inboxResource(ctx.caller.userId), { ctx, loader: ctx.loader, pairs: sorted });
}
