import { createHash } from 'node:crypto';
import type { DomainCtx } from '#shared/domain/context.ts';
import {
  inboxList,
  notificationEntity,
  type AccessRequestRecord,
  type NotificationRecord,
  type RequestNotice,
} from '#shared/domain/sharing/entity.ts';
import type { AccessRequestEmailMessage } from '#shared/domain/sharing/mail.ts';
import type { UserRecord } from '#shared/domain/users/entity.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import { runList } from '#shared/list/engine.ts';
import type { ListResource } from '#shared/list/resource.ts';

/**
 * The uuid of one recipient's notice of one access request event (the request's uuid and the event's time
 * name the event): the request path and the change stream both derive it, so the notice is written at
 * most once however often the event is replayed. UUID version 5 layout over SHA-1 of the three.
 */
export function noticeUuid(requestUuid: string, eventAt: string, recipientUuid: string): string {
  const b = createHash('sha1').update(`access_request_notice|${requestUuid}|${eventAt}|${recipientUuid}`).digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The in-app notices of an access request event, one per recipient, with their derived uuids. Pure. */
export function requestNotifications(request: AccessRequestRecord, notice: RequestNotice): NotificationRecord[] {
  const at = notice.at;
  return notice.recipients.map(
    (recipient): NotificationRecord => ({
      uuid: noticeUuid(request.uuid, at, recipient),
      kind: notice.kind,
      recipient_uuid: recipient,
      actor_uuid: request.requester_uuid,
      actor_display_name: notice.actor_display_name,
      subject_type: 'access_request',
      subject_uuid: request.uuid,
      shareable_type: request.shareable_type,
      shareable_uuid: request.shareable_uuid,
      shareable_title: notice.shareable_title,
      requested_level: request.requested_level,
      message: request.message,
      email_sent_at: null,
      created_at: at,
      updated_at: at,
    }),
  );
}

/**
 * The notice of an access request event, added to the transaction that creates (or resends) the request so
 * the owner and managers see it at once (read-your-writes). The e-mails are not queued here: the change
 * stream derives them (and any notice missing) from the committed request (shared/stream/projections/access-request-notices.ts),
 * so a function that dies after the commit loses nothing.
 */
export function addRequestNotifications(tx: WriteTx, request: AccessRequestRecord, notice: RequestNotice): NotificationRecord[] {
  const notes = requestNotifications(request, notice);
  for (const n of notes) tx.create(notificationEntity, n);
  return notes;
}

/** The e-mail message of an access request event's notices (only workers send e-mail). */
export function requestEmailMessage(
  tenantId: string,
  request: AccessRequestRecord,
  notice: RequestNotice,
  requester: Pick<UserRecord, 'uuid' | 'display_name' | 'email'>,
): AccessRequestEmailMessage {
  return {
    version: 1,
    tenant_uuid: tenantId,
    event: notice.kind,
    access_request_uuid: request.uuid,
    shareable: { type: request.shareable_type, uuid: request.shareable_uuid, title: notice.shareable_title },
    requester: { uuid: requester.uuid, display_name: requester.display_name, email: requester.email },
    requested_level: request.requested_level,
    message: request.message,
    deliveries: notice.recipients.map((r) => ({ recipient_uuid: r, notification_uuid: noticeUuid(request.uuid, notice.at, r) })),
  };
}

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
