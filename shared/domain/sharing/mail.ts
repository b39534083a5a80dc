import type { SQSBatchItemFailure, SQSEvent, SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import { getEntity, mutateEntity, nowIso, type DataCtx } from '#shared/db/store.ts';
import { notificationEntity, NOTIFICATION_KINDS, type NotificationRecord } from '#shared/domain/sharing/entity.ts';
import { LEVELS, SHAREABLE_PATHS } from '#shared/domain/sharing/types.ts';
import { userEntity, type UserRecord } from '#shared/domain/users/entity.ts';
import type { Email } from '#shared/email/mailer.ts';
import { NotFoundError } from '#shared/errors.ts';
import type { Log } from '#shared/logger.ts';
import type { WorkerHandler } from '#shared/queue/queue.ts';

/** The queue between the access-request endpoints and the e-mail worker (shared/routes/workers.ts). */
export const ACCESS_REQUEST_QUEUE = 'access-request-notifications';

/**
 * One message per access request event. It names each recipient's in-app notification: the worker marks
 * the notification (`email_sent_at`) once its e-mail went out, and skips notifications already marked, so a
 * redelivered message or a retried batch does not e-mail the same recipient twice.
 */
export const AccessRequestEmailMessageSchema = z.object({
  version: z.literal(1),
  tenant_uuid: z.string().min(1),
  event: z.enum(NOTIFICATION_KINDS),
  access_request_uuid: z.string(),
  shareable: z.object({ type: z.enum(SHAREABLE_PATHS as [string, ...string[]]), uuid: z.string(), title: z.string() }),
  requester: z.object({ uuid: z.string(), display_name: z.string(), email: z.string() }),
  requested_level: z.enum(LEVELS),
  message: z.string().nullable(),
  deliveries: z.array(z.object({ recipient_uuid: z.string(), notification_uuid: z.string() })),
});
export type AccessRequestEmailMessage = z.infer<typeof AccessRequestEmailMessageSchema>;

/** What delivering needs from one tenant's data: the worker's seam (fakes in unit tests). */
export interface InboxPort {
  notification(uuid: string): Promise<NotificationRecord | undefined>;
  user(uuid: string): Promise<UserRecord | undefined>;
  markEmailed(uuid: string, at: string): Promise<void>;
}

export interface MailDeps {
  inbox(tenantId: string): Promise<InboxPort>;
  send(email: Email): Promise<string>;
  log?: Pick<Log, 'info' | 'warn' | 'error'>;
}

/** The port over the table, confined to the message's tenant like any request. */
export function storeInbox(ctx: DataCtx): InboxPort {
  return {
    notification: async (uuid) => (await getEntity(ctx, notificationEntity, uuid, true))?.record,
    user: async (uuid) => (await getEntity(ctx, userEntity, uuid))?.record,
    async markEmailed(uuid, at) {
      await mutateEntity(ctx, notificationEntity, uuid, (cur) => (cur.record.email_sent_at ? undefined : { ...cur.record, email_sent_at: at, updated_at: at }), () => new NotFoundError('Notification', uuid));
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
    'Grant access from the resource\'s sharing settings; the request is resolved automatically once a grant covers it.',
  ].join('\n');
  return { to: [to], subject, text };
}

/**
 * Sends the e-mails of one message, one per recipient. Already-sent notifications are skipped; recipients
 * that no longer exist or are inactive get none. At-least-once: a crash between sending and marking sends
 * that one e-mail again on redelivery (accepted; the marker makes every other retry idempotent).
 */
export async function deliverAccessRequestEmails(msg: AccessRequestEmailMessage, deps: MailDeps): Promise<{ sent: number; skipped: number }> {
  const inbox = await deps.inbox(msg.tenant_uuid);
  let sent = 0;
  let skipped = 0;
  for (const d of msg.deliveries) {
    const note = await inbox.notification(d.notification_uuid);
    const user = note && !note.email_sent_at ? await inbox.user(d.recipient_uuid) : undefined;
    if (!note || note.email_sent_at || !user || user.status !== 'active') {
      skipped++;
      continue;
    }
    await deps.send(accessRequestEmail(msg, user.email));
    await inbox.markEmailed(note.uuid, nowIso());
    sent++;
  }
  return { sent, skipped };
}

/**
 * The SQS handler: each record on its own, failures reported as partial batch failures so only those
 * messages are redelivered (and dead-lettered after the queue's maxReceiveCount). A malformed message fails
 * too, to land in the dead-letter queue as evidence rather than vanish.
 */
export function accessRequestEmailHandler(deps: MailDeps): WorkerHandler {
  return async (event: SQSEvent) => {
    const failures: SQSBatchItemFailure[] = [];
    for (const record of event.Records) {
      try {
        const msg = AccessRequestEmailMessageSchema.parse(JSON.parse(record.body));
        const out = await deliverAccessRequestEmails(msg, deps);
        deps.log?.info('access request e-mails', { message_id: record.messageId, access_request_uuid: msg.access_request_uuid, ...out });
      } catch (err) {
        deps.log?.error('access request e-mail delivery failed', { message_id: record.messageId, receive_count: receiveCount(record), error: (err as Error).message });
        failures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures: failures };
  };
}

const receiveCount = (r: SQSRecord) => Number(r.attributes?.ApproximateReceiveCount ?? 0);
