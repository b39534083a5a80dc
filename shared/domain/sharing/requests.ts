import { getSide, nowIso, retryOnConflict, WriteTx, type DataCtx, type ItemCondition, type Stored } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { loadShareable, requestRecipients, shareableAccess } from '#shared/domain/sharing/access.ts';
import { accessRequestKey, shareableEntity, type AccessRequestRecord, type RequestNotice, type ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { addRequestNotifications } from '#shared/domain/sharing/notifications.ts';
import { higherLevel, PATH_BY_SHAREABLE_TYPE, satisfies, type Level, type ShareablePath, type ShareableType } from '#shared/domain/sharing/types.ts';

/**
 * Access requests (spec "States and transitions"):
 *   (none) --POST, not satisfied--> pending (owner and managers notified: in-app + e-mail)
 *   pending --POST again--> pending, upgraded in place (level only rises; message replaced if given), no notice
 *   pending --a grant at or above the level--> resolved (in the grant's transaction, see resolveByGrant)
 * A request the caller already satisfies is a no-op. Every change is a conditional write on the request's
 * one item (deterministic key), retried on a lost race (retryOnConflict); creating and upgrading also check
 * that the resource (owner, grants) did not change since it was read. Concurrent requests yield one pending
 * request and one set of notices.
 */
export const RESEND_WINDOW_MS = 60 * 60 * 1000;

export type RequestOutcome = 'created' | 'upgraded' | 'updated' | 'unchanged' | 'already_satisfied';
export type ResendStatus = 'resent' | 'throttled' | 'no_pending_request';

interface RequestInput {
  requested_level: Level;
  message?: string;
}

type StoredRequest = Stored<AccessRequestRecord>;

const ITEM_ONLY = ['PK', 'SK', 'kind', 'id', 'v', 'expires_at'];

/** The record as callers see it: the event's notice is the stream's input, not part of the request. */
const withoutNotice = ({ notice: _notice, ...r }: AccessRequestRecord): AccessRequestRecord => r;

async function readRequest(ctx: DataCtx, type: ShareableType, resourceUuid: string, requesterUuid: string): Promise<StoredRequest | undefined> {
  const item = await getSide(ctx, accessRequestKey(ctx.tenantId, type, resourceUuid, requesterUuid));
  if (!item) return undefined;
  const record = Object.fromEntries(Object.entries(item).filter(([k]) => !ITEM_ONLY.includes(k))) as unknown as AccessRequestRecord;
  return { record: withoutNotice(record), version: item.v as number };
}

const requestKeyOf = (ctx: DataCtx, s: ShareableRecord, requesterUuid: string) => accessRequestKey(ctx.tenantId, s.type, s.uuid, requesterUuid);

/** The request item's condition: still at the version read, or still absent. */
const sameVersion = (read: StoredRequest | undefined): ItemCondition => (read ? { equals: { v: read.version } } : { exists: false });

/** Writes the request item if it is still at the version read (absent: not yet written); else a retry. */
function putRequest(ctx: DataCtx, tx: WriteTx, s: ShareableRecord, record: AccessRequestRecord, read: StoredRequest | undefined): void {
  tx.putSide(requestKeyOf(ctx, s, record.requester_uuid), { kind: 'access_request', id: record.uuid, v: (read?.version ?? 0) + 1, ...record }, { if: sameVersion(read) });
}

/** The request item is still as read; a concurrent request write makes the transaction retry. */
function requestUnchanged(ctx: DataCtx, tx: WriteTx, s: ShareableRecord, requesterUuid: string, read: StoredRequest | undefined): void {
  tx.checkSide(requestKeyOf(ctx, s, requesterUuid), sameVersion(read));
}

/** The resource (its owner and grants) is still as read: a grant committed meanwhile makes the request retry. */
function shareableUnchanged(ctx: DataCtx, tx: WriteTx, stored: Stored<ShareableRecord>): void {
  tx.checkVersion(shareableEntity, stored);
}

export async function requestAccess(ctx: DomainCtx, path: ShareablePath, shareableUuid: string, input: RequestInput): Promise<{ record: AccessRequestRecord | null; outcome: RequestOutcome }> {
  const me = ctx.caller.userId;
  // A blank message is no message.
  const message = input.message === undefined ? undefined : input.message.trim() || null;
  return retryOnConflict(async () => {
    const stored = await loadShareable(ctx, path, shareableUuid, true);
    const s = stored.record;
    const read = await readRequest(ctx, s.type, s.uuid, me);
    const pending = read?.record.status === 'pending' ? read : undefined;
    if (satisfies(shareableAccess(ctx.caller, s).level, input.requested_level)) return { record: pending?.record ?? null, outcome: 'already_satisfied' as const };

    const now = nowIso();
    const tx = new WriteTx(ctx);
    shareableUnchanged(ctx, tx, stored);
    if (!pending) {
      // A resolved request (if any) is replaced: the new one is a new request with its own uuid.
      const record: AccessRequestRecord = {
        uuid: crypto.randomUUID(),
        shareable_type: PATH_BY_SHAREABLE_TYPE[s.type],
        shareable_uuid: s.uuid,
        requester_uuid: me,
        requested_level: input.requested_level,
        message: message ?? null,
        status: 'pending',
        created_at: now,
        updated_at: now,
        last_email_sent_at: now,
        resolved_at: null,
        resolved_by_uuid: null,
        notice: { kind: 'access_request.created', at: now, recipients: requestRecipients(s, me), actor_display_name: ctx.caller.user.display_name, shareable_title: s.title },
      };
      putRequest(ctx, tx, s, record, read);
      addRequestNotifications(tx, record, record.notice!);
      await tx.commit();
      return { record: withoutNotice(record), outcome: 'created' as const };
    }

    const level = higherLevel(pending.record.requested_level, input.requested_level);
    const nextMessage = message === undefined ? pending.record.message : message;
    if (level === pending.record.requested_level && nextMessage === pending.record.message) return { record: pending.record, outcome: 'unchanged' as const };
    const record: AccessRequestRecord = { ...pending.record, requested_level: level, message: nextMessage, updated_at: now };
    putRequest(ctx, tx, s, record, pending);
    await tx.commit();
    return { record, outcome: level !== pending.record.requested_level ? ('upgraded' as const) : ('updated' as const) };
  });
}

/** The caller's own pending request on the resource, or null. Needs no access to the resource, only that it exists. */
export async function myPendingRequest(ctx: DomainCtx, path: ShareablePath, shareableUuid: string): Promise<AccessRequestRecord | null> {
  const { record: s } = await loadShareable(ctx, path, shareableUuid);
  const read = await readRequest(ctx, s.type, s.uuid, ctx.caller.userId);
  return read?.record.status === 'pending' ? read.record : null;
}

/**
 * Re-sends the caller's pending request: new in-app notices to the current owner and managers, and their
 * e-mails, at most once per RESEND_WINDOW_MS counted from the last e-mail (the creation one included). The
 * window is enforced by the write itself (`last_email_sent_at <= now - window`), so of two concurrent
 * resends exactly one commits; the other re-reads and answers `throttled`.
 */
export async function resendAccessRequest(ctx: DomainCtx, path: ShareablePath, shareableUuid: string): Promise<{ status: ResendStatus; next_resend_at: string | null }> {
  const me = ctx.caller.userId;
  return retryOnConflict(async () => {
    const stored = await loadShareable(ctx, path, shareableUuid);
    const s = stored.record;
    const read = await readRequest(ctx, s.type, s.uuid, me);
    if (read?.record.status !== 'pending') return { status: 'no_pending_request' as const, next_resend_at: null };
    const request = read.record;
    const nowMs = Date.now();
    const nextAllowed = Date.parse(request.last_email_sent_at) + RESEND_WINDOW_MS;
    if (nowMs < nextAllowed) return { status: 'throttled' as const, next_resend_at: new Date(nextAllowed).toISOString() };

    const now = new Date(nowMs).toISOString();
    const tx = new WriteTx(ctx);
    const notice: RequestNotice = { kind: 'access_request.resent', at: now, recipients: requestRecipients(s, me), actor_display_name: ctx.caller.user.display_name, shareable_title: s.title };
    tx.updateSide(requestKeyOf(ctx, s, me), {
      set: { last_email_sent_at: now, notice },
      add: { v: 1 },
      if: { equals: { status: 'pending', id: request.uuid }, atMost: { last_email_sent_at: new Date(nowMs - RESEND_WINDOW_MS).toISOString() } },
    });
    addRequestNotifications(tx, { ...request, last_email_sent_at: now }, notice);
    await tx.commit();
    return { status: 'resent' as const, next_resend_at: new Date(nowMs + RESEND_WINDOW_MS).toISOString() };
  });
}

/**
 * Adds to a grant's transaction what the grant means for the grantee's request: a pending request the new
 * level satisfies is resolved in the same transaction; otherwise the transaction is conditioned on the request
 * being unchanged, so a request created or upgraded meanwhile makes the grant re-read and decide again.
 * Returns whether it resolved the request.
 */
export async function resolveByGrant(ctx: DomainCtx, tx: WriteTx, s: ShareableRecord, granteeUuid: string, level: Level | null, now: string): Promise<boolean> {
  if (level === null) return false; // a revocation satisfies nothing
  const read = await readRequest(ctx, s.type, s.uuid, granteeUuid);
  if (read?.record.status === 'pending' && satisfies(level, read.record.requested_level)) {
    putRequest(ctx, tx, s, { ...read.record, status: 'resolved', resolved_at: now, resolved_by_uuid: ctx.caller.userId, updated_at: now }, read);
    return true;
  }
  requestUnchanged(ctx, tx, s, granteeUuid, read);
  return false;
}

export const presentAccessRequest = (r: AccessRequestRecord) => ({
  uuid: r.uuid,
  shareable_type: r.shareable_type,
  shareable_uuid: r.shareable_uuid,
  requester_uuid: r.requester_uuid,
  requested_level: r.requested_level,
  message: r.message,
  status: r.status,
  created_at: r.created_at,
  updated_at: r.updated_at,
  last_email_sent_at: r.last_email_sent_at,
  resolved_at: r.resolved_at,
  resolved_by_uuid: r.resolved_by_uuid,
});
