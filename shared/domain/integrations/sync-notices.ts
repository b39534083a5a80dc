import { createHash } from 'node:crypto';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { committedUnlessConditionFails } from '#shared/db/conflict-retries.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import type { DataSourceRecord } from '#shared/domain/integrations/entity.ts';
import { FAILURES_BEFORE_FAILING, FAILING_RETRY_MINUTES } from '#shared/domain/integrations/sync-rules.ts';
import { notificationEntity, type NotificationRecord } from '#shared/domain/sharing/entity.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import type { Email } from '#shared/email/mailer.ts';

/** The notice kind the creator finds in `GET /notifications` when a source turns failing. */
export const DATA_SOURCE_FAILING_KIND = 'data_source.failing';

/** The notice's uuid, derived from the source and the moment it turned failing: written once however often the run is replayed. */
export function failingNoticeUuid(sourceUuid: string, failingAt: string): string {
  const b = createHash('sha1').update(`data_source_failing|${sourceUuid}|${failingAt}`).digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const message = (s: DataSourceRecord) =>
  `Data source "${s.name}" failed ${FAILURES_BEFORE_FAILING} times in a row and is now failing: it is tried every ${FAILING_RETRY_MINUTES} minutes until a sync succeeds. Last error: ${s.last_error ?? 'unknown'}`;

/**
 * The creator's in-app notice, added to the transaction that makes the source failing (the notification
 * record is the access-request notice's shape with the data source as subject and no shareable).
 */
export function addFailingNotice(tx: WriteTx, source: DataSourceRecord, now: string): string {
  const uuid = failingNoticeUuid(source.uuid, now);
  const note = {
    uuid,
    kind: DATA_SOURCE_FAILING_KIND,
    recipient_uuid: source.creator_uuid,
    actor_uuid: null,
    actor_display_name: 'Goal tracking',
    subject_type: 'data_source',
    subject_uuid: source.uuid,
    shareable_type: null,
    shareable_uuid: null,
    shareable_title: null,
    requested_level: null,
    message: message(source),
    email_sent_at: null,
    created_at: now,
    updated_at: now,
  };
  tx.create(notificationEntity, note as unknown as NotificationRecord);
  return uuid;
}

/**
 * E-mails the creator the notice `noticeUuid` unless it went out already (its `email_sent_at` marker), then
 * marks it: a run redelivered after a failed send tries again, one that already sent does not. Only workers
 * send e-mail: the sync worker calls this once the notice is committed.
 */
export async function emailFailingNotice(
  data: DataCtx,
  noticeUuid: string,
  send: (e: Email) => Promise<string>,
  now: () => string,
): Promise<boolean> {
  const note = await getEntity(data, notificationEntity, noticeUuid, true);
  if (!note || note.record.email_sent_at) return false;
  const user = (await getEntity(data, userEntity, note.record.recipient_uuid))?.record;
  if (user?.status === 'active')
    await send({
      to: [user.email],
      subject: 'A data source stopped syncing',
      text: `${note.record.message ?? ''}\n\nFix the source, then run POST /data_sources/${note.record.subject_uuid}/sync.`,
    });
  const at = now();
  // a failed condition: another run of the worker marked it first (only this mark rewrites a notice)
  await committedUnlessConditionFails(() =>
    new WriteTx(data).replace(notificationEntity, note, { ...note.record, email_sent_at: at, updated_at: at }),
  );
  return true;
}
