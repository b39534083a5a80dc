import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config.ts';
import { keys } from '#shared/db/keys.ts';
import { nowIso, retryOnConflict, WriteTx, type DataCtx, type Stored } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { loadShareable } from '#shared/domain/sharing/access.ts';
import { decideRequestAccess, decideResend, RESEND_WINDOW_MS, resolveByGrant, type AccessRequestCommand, type RequestOutcome, type ResendStatus } from '#shared/domain/sharing/decide.ts';
import { accessRequestKey, shareableEntity, type AccessRequestRecord, type ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { addRequestNotifications, queueRequestEmails } from '#shared/domain/sharing/notifications.ts';
import type { Level, ShareablePath, ShareableType } from '#shared/domain/sharing/types.ts';

/**
 * Access request commands: read, decide (decide.ts, where the states and rules are), write once. Every
 * change is a conditional write on the request's one item (deterministic key), retried on a lost race
 * (retryOnConflict); creating and upgrading also check that the resource (owner, grants) did not change
 * since it was read. Concurrent requests yield one pending request and one set of notices.
 */
export { RESEND_WINDOW_MS, type RequestOutcome, type ResendStatus } from '#shared/domain/sharing/decide.ts';

type StoredRequest = Stored<AccessRequestRecord>;

const ITEM_ONLY = ['PK', 'SK', 'kind', 'id', 'v'];

async function readRequest(ctx: DataCtx, type: ShareableType, resourceUuid: string, requesterUuid: string): Promise<StoredRequest | undefined> {
  const out = await ctx.db.send(new GetCommand({ TableName: config.tableName, Key: accessRequestKey(ctx.tenantId, type, resourceUuid, requesterUuid), ConsistentRead: true }));
  if (!out.Item) return undefined;
  const record = Object.fromEntries(Object.entries(out.Item).filter(([k]) => !ITEM_ONLY.includes(k))) as unknown as AccessRequestRecord;
  return { record, version: out.Item.v as number };
}

const requestKeyOf = (ctx: DataCtx, s: ShareableRecord, requesterUuid: string) => accessRequestKey(ctx.tenantId, s.type, s.uuid, requesterUuid);

/** Writes the request item if it is still at the version read (absent: not yet written); else a retry. */
function putRequest(ctx: DataCtx, tx: WriteTx, s: ShareableRecord, record: AccessRequestRecord, read: StoredRequest | undefined): void {
  tx.add({
    Put: {
      TableName: config.tableName,
      Item: { ...requestKeyOf(ctx, s, record.requester_uuid), kind: 'access_request', id: record.uuid, v: (read?.version ?? 0) + 1, ...record },
      ...(read ? { ConditionExpression: 'v = :v', ExpressionAttributeValues: { ':v': read.version } } : { ConditionExpression: 'attribute_not_exists(PK)' }),
    },
  });
}

/** The request item is still as read; a concurrent request write makes the transaction retry. */
function requestUnchanged(ctx: DataCtx, tx: WriteTx, s: ShareableRecord, requesterUuid: string, read: StoredRequest | undefined): void {
  tx.add({
    ConditionCheck: {
      TableName: config.tableName,
      Key: requestKeyOf(ctx, s, requesterUuid),
      ...(read ? { ConditionExpression: 'v = :v', ExpressionAttributeValues: { ':v': read.version } } : { ConditionExpression: 'attribute_not_exists(PK)' }),
    },
  });
}

/** The resource (its owner and grants) is still as read: a grant committed meanwhile makes the request retry. */
function shareableUnchanged(ctx: DataCtx, tx: WriteTx, stored: Stored<ShareableRecord>): void {
  tx.add({ ConditionCheck: { TableName: config.tableName, Key: keys.entity(ctx.tenantId, shareableEntity.type, stored.record.uuid), ConditionExpression: 'v = :v', ExpressionAttributeValues: { ':v': stored.version } } });
}

export async function requestAccess(ctx: DomainCtx, path: ShareablePath, shareableUuid: string, input: AccessRequestCommand): Promise<{ record: AccessRequestRecord | null; outcome: RequestOutcome }> {
  const me = ctx.caller.userId;
  return retryOnConflict(async () => {
    const stored = await loadShareable(ctx, path, shareableUuid, true);
    const s = stored.record;
    const read = await readRequest(ctx, s.type, s.uuid, me);
    const now = nowIso();
    const decision = decideRequestAccess(ctx.caller, s, read?.record, input, now, crypto.randomUUID());
    if (decision.outcome === 'already_satisfied' || decision.outcome === 'unchanged') return decision;
    const tx = new WriteTx(ctx);
    shareableUnchanged(ctx, tx, stored);
    putRequest(ctx, tx, s, decision.record, read);
    if (decision.outcome !== 'created') {
      await tx.commit();
      return { record: decision.record, outcome: decision.outcome };
    }
    const record = decision.record;
    const notes = addRequestNotifications(tx, 'access_request.created', record, s, ctx.caller.user.display_name, decision.notify, now);
    await tx.commit();
    await queueRequestEmails(ctx, 'access_request.created', record, s, notes);
    return { record, outcome: 'created' as const };
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
    const nowMs = Date.now();
    const decision = decideResend(ctx.caller, s, read?.record, nowMs);
    if (decision.status !== 'resent') return decision;
    const { sent } = decision;
    const tx = new WriteTx(ctx);
    tx.add({
      Update: {
        TableName: config.tableName,
        Key: requestKeyOf(ctx, s, me),
        UpdateExpression: 'SET last_email_sent_at = :now, v = v + :one',
        ConditionExpression: '#status = :pending AND id = :id AND last_email_sent_at <= :cutoff',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':now': sent.last_email_sent_at, ':one': 1, ':pending': 'pending', ':id': sent.uuid, ':cutoff': new Date(nowMs - RESEND_WINDOW_MS).toISOString() },
      },
    });
    const notes = addRequestNotifications(tx, 'access_request.resent', sent, s, ctx.caller.user.display_name, decision.notify, sent.last_email_sent_at);
    await tx.commit();
    await queueRequestEmails(ctx, 'access_request.resent', sent, s, notes);
    return { status: decision.status, next_resend_at: decision.next_resend_at };
  });
}

/**
 * Adds to a grant's transaction what the grant means for the grantee's request (decide.ts resolveByGrant):
 * a request it satisfies is resolved in the same transaction; otherwise the transaction is conditioned on
 * the request being unchanged, so a request created or upgraded meanwhile makes the grant re-read and
 * decide again. Returns whether it resolved the request.
 */
export async function addGrantRequestEffect(ctx: DomainCtx, tx: WriteTx, s: ShareableRecord, granteeUuid: string, level: Level | null, now: string): Promise<boolean> {
  if (level === null) return false; // a revocation satisfies nothing: no read
  const read = await readRequest(ctx, s.type, s.uuid, granteeUuid);
  const resolved = resolveByGrant(ctx.caller, read?.record, level, now);
  if (resolved) putRequest(ctx, tx, s, resolved, read);
  else requestUnchanged(ctx, tx, s, granteeUuid, read);
  return !!resolved;
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
