import { ENTITY_SK } from '#shared/db/keys.ts';
import type { DataCtx } from '#shared/db/model.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { committedUnlessConditionFails } from '#shared/db/conflict-retries.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import type { AccessRequestRecord } from '#shared/domain/sharing/entity.ts';
import { notificationEntity } from '#shared/domain/sharing/entity.ts';
import { ACCESS_REQUEST_QUEUE } from '#shared/domain/sharing/mail.ts';
import { requestEmailMessage, requestNotifications } from '#shared/domain/sharing/notifications.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { queueSender } from '#shared/queue/queue.ts';
import type { Projection } from '#shared/stream/projection.ts';
import type { TableChange } from '#shared/table-change.ts';

/** The request as of an image of its item (its fields are top-level attributes), or undefined for any other item. */
const requestOf = (img: Record<string, unknown> | undefined) =>
  img?.kind === 'access_request' ? (img as unknown as AccessRequestRecord) : undefined;

/**
 * The request change is a notice event: a pending request written with a notice it did not carry before (a
 * request created, a new one replacing a resolved one, or a resend). Any other write of the item (an upgrade,
 * a resolve, an operator's fix of a field) carries no new notice and tells no one.
 */
export function noticeEvent(change: TableChange): AccessRequestRecord | undefined {
  if (change.keys.SK !== ENTITY_SK) return undefined; // the request item itself, nothing indexed beside it
  const after = requestOf(change.newImage);
  if (after?.status !== 'pending' || !after.notice) return undefined;
  const before = requestOf(change.oldImage);
  const isNewEvent = !before || before.uuid !== after.uuid || before.notice?.at !== after.notice.at;
  return isNewEvent ? after : undefined;
}

/** Writes the notice unless it exists (its uuid is derived from the event, so this is the once-only check). */
async function ensureNotification(ctx: DataCtx, n: ReturnType<typeof requestNotifications>[number]): Promise<void> {
  // conditioned on the item being absent; a failed condition: written meanwhile, the same notice
  await committedUnlessConditionFails(() => new WriteTx(ctx).create(notificationEntity, n));
}

/**
 * Access-request notices from the change stream: for each committed created/resent event, every recipient's
 * in-app notice (normally already written in the request's own transaction; written here if not) and one
 * e-mail message for the worker. Idempotent: the notices' uuids derive from the event, so a replay finds them
 * and writes nothing; a replayed e-mail message names the same notices, and the worker skips those already
 * marked e-mailed. A queue that cannot be reached fails the change, which is retried and then dead-lettered
 * (never lost, as an enqueue after the commit in the request could be).
 */
export const accessRequestNoticesProjection: Projection = {
  name: 'access-request-notices',
  accepts: (change) => noticeEvent(change) !== undefined,
  async apply(change, ctx) {
    const request = noticeEvent(change)!;
    const notice = request.notice!;
    if (notice.recipients.length === 0) return;
    const notes = requestNotifications(request, notice);
    const existing = await getEntities(
      ctx.data,
      notificationEntity,
      notes.map((n) => n.uuid),
      true,
    );
    for (const n of notes) if (!existing.has(n.uuid)) await ensureNotification(ctx.data, n);
    const requester = (await getEntity(ctx.data, userEntity, request.requester_uuid))?.record;
    if (!requester) return; // the requester is gone: the in-app notices stand, there is no one to name in an e-mail
    await queueSender().send(ACCESS_REQUEST_QUEUE, requestEmailMessage(change.tenantId, request, notice, requester));
  },
};
