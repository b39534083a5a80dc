import { runCommand } from '#shared/command/run.ts';
import type { ItemCondition } from '#shared/db/expressions.ts';
import type { Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getSide } from '#shared/db/side-items.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import { newId } from '#shared/ids.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { refuse } from '#shared/decision.ts';
import { findShareable, loadShareable } from '#shared/domain/sharing/load-shareable.ts';
import {
  decideRequestAccess,
  decideResend,
  RESEND_WINDOW_MS,
  type AccessRequestCommand,
  type RequestOutcome,
  type ResendStatus,
} from '#shared/domain/sharing/decide.ts';
import { accessRequestKey, shareableEntity, type AccessRequestRecord, type ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { addRequestNotifications } from '#shared/domain/sharing/notifications.ts';
import { shareableNotFound, type Level, type ShareablePath, type ShareableType } from '#shared/domain/sharing/types.ts';

/**
 * Access request commands: read, decide (decide.ts, where the states and rules are), write once. Every
 * change is a conditional write on the request's one item (deterministic key), retried on a lost race
 * (the command runner's one retry budget); creating and upgrading also check that the resource (owner, grants) did not change
 * since it was read. Concurrent requests yield one pending request and one set of notices.
 */
export type { RequestOutcome, ResendStatus } from '#shared/domain/sharing/decide.ts';

type StoredRequest = Stored<AccessRequestRecord>;

const ITEM_ONLY = ['PK', 'SK', 'kind', 'id', 'v', 'expires_at'];

/** The record as callers see it: the event's notice is the stream's input, not part of the request. */
const withoutNotice = ({ notice: _notice, ...r }: AccessRequestRecord): AccessRequestRecord => r;

async function readRequest(
  ctx: DataCtx,
  type: ShareableType,
  resourceUuid: string,
  requesterUuid: string,
): Promise<StoredRequest | undefined> {
  const item = await getSide(ctx, accessRequestKey(ctx.tenantId, type, resourceUuid, requesterUuid));
  if (!item) return undefined;
  const record = Object.fromEntries(Object.entries(item).filter(([k]) => !ITEM_ONLY.includes(k))) as unknown as AccessRequestRecord;
  return { record: withoutNotice(record), version: item.v as number };
}

const requestKeyOf = (ctx: DataCtx, s: ShareableRecord, requesterUuid: string) =>
  accessRequestKey(ctx.tenantId, s.type, s.uuid, requesterUuid);

/** The request item's condition: still at the version read, or still absent. */
const sameVersion = (read: StoredRequest | undefined): ItemCondition => (read ? { equals: { v: read.version } } : { exists: false });

/** Writes the request item if it is still at the version read (absent: not yet written); else a retry. */
function putRequest(ctx: DataCtx, tx: WriteTx, s: ShareableRecord, record: AccessRequestRecord, read: StoredRequest | undefined): void {
  tx.putSide(
    requestKeyOf(ctx, s, record.requester_uuid),
    { kind: 'access_request', id: record.uuid, v: (read?.version ?? 0) + 1, ...record },
    { if: sameVersion(read) },
  );
}

/** The request item is still as read; a concurrent request write makes the transaction retry. */
function requestUnchanged(ctx: DataCtx, tx: WriteTx, s: ShareableRecord, requesterUuid: string, read: StoredRequest | undefined): void {
  tx.checkSide(requestKeyOf(ctx, s, requesterUuid), sameVersion(read));
}

/** The resource (its owner and grants) is still as read: a grant committed meanwhile makes the request retry. */
function shareableUnchanged(tx: WriteTx, stored: Stored<ShareableRecord>): void {
  tx.checkVersion(shareableEntity, stored);
}

export async function requestAccess(
  ctx: DomainCtx,
  path: ShareablePath,
  shareableUuid: string,
  input: AccessRequestCommand,
): Promise<{ record: AccessRequestRecord | null; outcome: RequestOutcome }> {
  const me = ctx.caller.userId;
  const uuid = newId();
  return runCommand(ctx, {
    read: () => readWithRequest(ctx, path, shareableUuid, me, true),
    decide: (read, now) =>
      read
        ? decideRequestAccess(ctx.caller, read.stored.record, read.request?.record, input, now, uuid)
        : refuse(shareableNotFound(path, shareableUuid)),
    write: (tx, decision, read): { record: AccessRequestRecord | null; outcome: RequestOutcome } => {
      if (decision.outcome === 'already_satisfied' || decision.outcome === 'unchanged') return decision;
      const { stored, request } = read!;
      shareableUnchanged(tx, stored);
      putRequest(ctx, tx, stored.record, decision.record, request);
      if (decision.outcome !== 'created') return { record: decision.record, outcome: decision.outcome };
      addRequestNotifications(tx, decision.record, decision.record.notice);
      return { record: withoutNotice(decision.record), outcome: 'created' };
    },
  });
}

/** The resource (undefined: 404, as loadShareable) and the caller's request item on it. */
async function readWithRequest(ctx: DomainCtx, path: ShareablePath, shareableUuid: string, requesterUuid: string, consistent: boolean) {
  const stored = await findShareable(ctx, path, shareableUuid, consistent);
  return stored && { stored, request: await readRequest(ctx, stored.record.type, stored.record.uuid, requesterUuid) };
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
export async function resendAccessRequest(
  ctx: DomainCtx,
  path: ShareablePath,
  shareableUuid: string,
): Promise<{ status: ResendStatus; next_resend_at: string | null }> {
  const me = ctx.caller.userId;
  return runCommand(ctx, {
    read: () => readWithRequest(ctx, path, shareableUuid, me, false),
    decide: (read, now) =>
      read
        ? decideResend(ctx.caller, read.stored.record, read.request?.record, Date.parse(now))
        : refuse(shareableNotFound(path, shareableUuid)),
    write: (tx, decision, read, { now }) => {
      if (decision.status !== 'resent') return decision;
      const { sent } = decision;
      tx.updateSide(requestKeyOf(ctx, read!.stored.record, me), {
        set: { last_email_sent_at: sent.last_email_sent_at, notice: decision.notice },
        add: { v: 1 },
        if: {
          equals: { status: 'pending', id: sent.uuid },
          atMost: { last_email_sent_at: new Date(Date.parse(now) - RESEND_WINDOW_MS).toISOString() },
        },
      });
      addRequestNotifications(tx, sent, decision.notice);
      return { status: decision.status, next_resend_at: decision.next_resend_at };
    },
  });
}

/** The grantee's request on the resource a grant reads (none for a revocation: it satisfies nothing). */
export async function grantedRequest(
  ctx: DomainCtx,
  s: ShareableRecord,
  granteeUuid: string,
  level: Level | null,
): Promise<StoredRequest | undefined> {
  return level === null ? undefined : readRequest(ctx, s.type, s.uuid, granteeUuid);
}

/**
 * Adds to a grant's transaction what the grant means for the grantee's request as read (decide.ts
 * resolveByGrant): a request it satisfies is resolved in the same transaction (`resolved`); otherwise the
 * transaction is conditioned on the request being unchanged, so a request created or upgraded meanwhile makes
 * the grant re-read and decide again. A revocation reads and checks nothing.
 */
export function addGrantRequestEffect(
  ctx: DataCtx,
  tx: WriteTx,
  s: ShareableRecord,
  granteeUuid: string,
  level: Level | null,
  read: StoredRequest | undefined,
  resolved: AccessRequestRecord | undefined,
): void {
  if (level === null) return;
  if (resolved) putRequest(ctx, tx, s, resolved, read);
  else requestUnchanged(ctx, tx, s, granteeUuid, read);
}
