import { ENTITY_SK } from '#shared/db/keys.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { createOp } from '#shared/db/tx-ops.ts';
import { notificationEntity, type AccessRequestRecord } from '#shared/domain/sharing/entity.ts';
import { ACCESS_REQUEST_QUEUE } from '#shared/domain/sharing/mail.ts';
import { requestEmailMessage, requestNotifications } from '#shared/domain/sharing/notifications.ts';
import { userEntity, type UserRecord } from '#shared/domain/users/entity.ts';
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

/** The notices already written (by the request's own transaction or an earlier delivery), and the requester. */
export interface AccessRequestNoticesState {
  existing: ReadonlySet<string>;
  requester: UserRecord | undefined;
}

/**
 * Access-request notices from the change stream: for each committed created/resent event, every recipient's
 * in-app notice (normally already written in the request's own transaction; written here if not, each in a
 * transaction of its own, conditioned on its absence) and one e-mail message for the worker. Idempotent: the
 * notices' uuids derive from the event, so a replay finds them and writes nothing (one written meanwhile fails
 * its condition: read again); a replayed e-mail message names the same notices, and the worker skips those
 * already marked e-mailed. A requester gone: the in-app notices stand, there is no one to name in an e-mail. A
 * queue that cannot be reached fails the change, which is retried and then dead-lettered (never lost, as an
 * enqueue after the commit in the request could be).
 */
export const accessRequestNoticesProjection: Projection<AccessRequestNoticesState> = {
  name: 'access-request-notices',
  accepts: (change) => noticeEvent(change) !== undefined,
  async reads(change, data) {
    const request = noticeEvent(change)!;
    if (request.notice!.recipients.length === 0) return { existing: new Set(), requester: undefined };
    const uuids = requestNotifications(request, request.notice!).map((n) => n.uuid);
    const [existing, requester] = await Promise.all([
      getEntities(data, notificationEntity, uuids, true),
      getEntity(data, userEntity, request.requester_uuid),
    ]);
    return { existing: new Set(existing.keys()), requester: requester?.record };
  },
  project(change, { existing, requester }) {
    const request = noticeEvent(change)!;
    const notice = request.notice!;
    if (notice.recipients.length === 0) return {};
    const missing = requestNotifications(request, notice).filter((n) => !existing.has(n.uuid));
    return {
      transactions: missing.map((n) => [createOp(notificationEntity, n)]),
      ...(requester
        ? { messages: [{ queue: ACCESS_REQUEST_QUEUE, body: requestEmailMessage(change.tenantId, request, notice, requester) }] }
        : {}),
    };
  },
};
