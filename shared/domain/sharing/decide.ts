/**
 * Shareable resources, grants and access requests: the rules of each command as pure functions (no I/O, no
 * clock, no id generation). shareables.ts and requests.ts read what they need, call these, and write once.
 *
 * Access requests (spec "States and transitions"):
 *   (none) --POST, not satisfied--> pending (owner and managers notified: in-app + e-mail)
 *   pending --POST again--> pending, upgraded in place (level only rises; message replaced if given), no notice
 *   pending --a grant at or above the level--> resolved (in the grant's transaction)
 * A request the caller already satisfies is a no-op. A resend is allowed once per RESEND_WINDOW_MS counted
 * from the last e-mail (the creation one included).
 */
import { canWriteContent, type Caller } from '#shared/auth/caller.ts';
import { canManageGrants, requestRecipients, shareableAccess, type ShareableAccess } from '#shared/domain/sharing/access.ts';
import {
  MAX_GRANTS,
  MAX_MANAGERS,
  type AccessRequestRecord,
  type Grant,
  type RequestNotice,
  type ShareableRecord,
} from '#shared/domain/sharing/entity.ts';
import {
  higherLevel,
  PATH_BY_SHAREABLE_TYPE,
  satisfies,
  shareableName,
  SHAREABLE_TYPE_BY_PATH,
  type Level,
  type ShareablePath,
} from '#shared/domain/sharing/types.ts';
import type { UserRecord } from '#shared/domain/users/entity.ts';
import { accept, refuse, type Decision } from '#shared/decision.ts';
import { ForbiddenError, ValidationError, type AppError } from '#shared/errors.ts';

export const RESEND_WINDOW_MS = 60 * 60 * 1000;

export interface ShareableCreate {
  title: string;
  content?: string | null;
}

export interface GrantCommand {
  user_uuid: string;
  /** null revokes. */
  level: Level | null;
}

export interface AccessRequestCommand {
  requested_level: Level;
  message?: string;
}

export type RequestOutcome = 'created' | 'upgraded' | 'updated' | 'unchanged' | 'already_satisfied';
export type ResendStatus = 'resent' | 'throttled' | 'no_pending_request';

// ---------- shareables and grants ----------

export const shareableCreateRefusal = (caller: Caller): AppError | undefined =>
  canWriteContent(caller) ? undefined : new ForbiddenError('Viewers cannot create shareable resources');

export function decideCreateShareable(
  caller: Caller,
  path: ShareablePath,
  cmd: ShareableCreate,
  now: string,
  uuid: string,
): Decision<ShareableRecord> {
  const refusal = shareableCreateRefusal(caller);
  if (refusal) return refuse(refusal);
  return accept({
    uuid,
    type: SHAREABLE_TYPE_BY_PATH[path],
    title: cmd.title,
    content: cmd.content ?? null,
    owner_uuid: caller.userId,
    grants: [],
    created_at: now,
    updated_at: now,
  });
}

/** A resource the caller can at least view: 403 without owner, admin or grant. */
export function decideView(caller: Caller, s: ShareableRecord, path: ShareablePath): Decision<ShareableAccess> {
  const access = shareableAccess(caller, s);
  if (!access.level)
    return refuse(
      new ForbiddenError(`You have no access to this ${shareableName(s.type)}; request it with POST /${path}/${s.uuid}/access_requests`),
    );
  return accept(access);
}

/** Refused before the grantee is read: owner, admins and `manage` grantees only (checked on the record written). */
export function grantRefusal(caller: Caller, s: ShareableRecord): AppError | undefined {
  return canManageGrants(caller, shareableAccess(caller, s))
    ? undefined
    : new ForbiddenError('Only the owner and users with manage access can change grants');
}

export interface GrantChange {
  /** The resource with its new grant list (its `updated_at` moved only when something is written). */
  next: ShareableRecord;
  /** The grant list is as it was: nothing to write unless the grant resolves a request. */
  unchanged: boolean;
}

/**
 * Sets (or, with level null, revokes) `grantee`'s grant, as read (undefined: not a user of the tenant). An
 * existing grant keeps its place in the list; a new one goes last.
 */
export function decideGrant(
  caller: Caller,
  s: ShareableRecord,
  cmd: GrantCommand,
  grantee: UserRecord | undefined,
  now: string,
): Decision<GrantChange> {
  const refusal = grantRefusal(caller, s);
  if (refusal) return refuse(refusal);
  if (!grantee) return refuse(ValidationError.field('user_uuid', 'not_found', `user_uuid ${cmd.user_uuid} is not a user of this tenant`));
  if (grantee.uuid === s.owner_uuid) return refuse(ValidationError.field('user_uuid', 'owner', 'The owner already holds every level'));
  const existing = s.grants.find((g) => g.user_uuid === grantee.uuid);
  const unchanged = (existing?.level ?? null) === cmd.level;
  const grant: Grant | undefined =
    cmd.level === null
      ? undefined
      : unchanged
        ? existing
        : { user_uuid: grantee.uuid, level: cmd.level, granted_by_uuid: caller.userId, granted_at: now };
  const grants = !grant
    ? s.grants.filter((g) => g !== existing)
    : existing
      ? s.grants.map((g) => (g === existing ? grant : g))
      : [...s.grants, grant];
  if (grants.length > MAX_GRANTS)
    return refuse(ValidationError.field('user_uuid', 'too_many', `A resource holds at most ${MAX_GRANTS} grants`));
  if (grants.filter((g) => g.level === 'manage').length > MAX_MANAGERS)
    return refuse(ValidationError.field('level', 'too_many', `A resource has at most ${MAX_MANAGERS} users with manage access`));
  return accept({ next: unchanged ? s : { ...s, grants, updated_at: now }, unchanged });
}

/** What a grant writes: the resource (undefined: nothing changes) and the grantee's request it resolves (resolveByGrant). */
export interface GrantWrite {
  next: ShareableRecord | undefined;
  resolved: AccessRequestRecord | undefined;
}

/**
 * The whole grant once read: the grantee (undefined: not a user of the tenant) and its request on the resource.
 * Nothing to write unless the grant changed or it resolves a request.
 */
export function decideSetGrant(
  caller: Caller,
  s: ShareableRecord,
  cmd: GrantCommand,
  grantee: UserRecord | undefined,
  request: AccessRequestRecord | undefined,
  now: string,
): Decision<GrantWrite> {
  const change = decideGrant(caller, s, cmd, grantee, now);
  if ('error' in change) return change;
  const resolved = resolveByGrant(caller, request, cmd.level, now);
  return accept({ next: change.write.unchanged && !resolved ? undefined : { ...change.write.next, updated_at: now }, resolved });
}

/**
 * What a grant means for the grantee's request as read: a pending request the new level satisfies is
 * resolved (returned); anything else is left as it is (undefined). A revocation satisfies nothing.
 */
export function resolveByGrant(
  caller: Caller,
  request: AccessRequestRecord | undefined,
  level: Level | null,
  now: string,
): AccessRequestRecord | undefined {
  if (level === null || request?.status !== 'pending' || !satisfies(level, request.requested_level)) return undefined;
  return { ...request, status: 'resolved', resolved_at: now, resolved_by_uuid: caller.userId, updated_at: now };
}

// ---------- access requests ----------

export type RequestDecision =
  | { outcome: 'already_satisfied'; record: AccessRequestRecord | null }
  | { outcome: 'unchanged'; record: AccessRequestRecord }
  /** `record` replaces the request item as read, with the `notice` of its creation (the change stream's input). */
  | { outcome: 'created'; record: AccessRequestRecord & { notice: RequestNotice } }
  | { outcome: 'upgraded' | 'updated'; record: AccessRequestRecord };

/** The notices of an event: the owner and managers now, named as they read at the event. */
const noticeOf = (caller: Caller, s: ShareableRecord, kind: RequestNotice['kind'], at: string): RequestNotice => ({
  kind,
  at,
  recipients: requestRecipients(s, caller.userId),
  actor_display_name: caller.user.display_name,
  shareable_title: s.title,
});

/** `read` is the caller's request item on the resource (pending or resolved), if any. A blank message is no message. */
export function decideRequestAccess(
  caller: Caller,
  s: ShareableRecord,
  read: AccessRequestRecord | undefined,
  cmd: AccessRequestCommand,
  now: string,
  uuid: string,
): Decision<RequestDecision> {
  const me = caller.userId;
  const message = cmd.message === undefined ? undefined : cmd.message.trim() || null;
  const pending = read?.status === 'pending' ? read : undefined;
  if (satisfies(shareableAccess(caller, s).level, cmd.requested_level))
    return accept({ outcome: 'already_satisfied', record: pending ?? null });
  if (!pending) {
    // A resolved request (if any) is replaced: the new one is a new request with its own uuid.
    const record: AccessRequestRecord & { notice: RequestNotice } = {
      uuid,
      shareable_type: PATH_BY_SHAREABLE_TYPE[s.type],
      shareable_uuid: s.uuid,
      requester_uuid: me,
      requested_level: cmd.requested_level,
      message: message ?? null,
      status: 'pending',
      created_at: now,
      updated_at: now,
      last_email_sent_at: now,
      resolved_at: null,
      resolved_by_uuid: null,
      notice: noticeOf(caller, s, 'access_request.created', now),
    };
    return accept({ outcome: 'created', record });
  }
  const level = higherLevel(pending.requested_level, cmd.requested_level);
  const nextMessage = message === undefined ? pending.message : message;
  if (level === pending.requested_level && nextMessage === pending.message) return accept({ outcome: 'unchanged', record: pending });
  const record: AccessRequestRecord = { ...pending, requested_level: level, message: nextMessage, updated_at: now };
  return accept({ outcome: level !== pending.requested_level ? 'upgraded' : 'updated', record });
}

export type ResendDecision =
  | { status: 'no_pending_request' | 'throttled'; next_resend_at: string | null }
  /** `sent` is the request with its new e-mail time; `notice` the event's (the change stream's input). */
  | { status: 'resent'; next_resend_at: string; sent: AccessRequestRecord; notice: RequestNotice };

export function decideResend(
  caller: Caller,
  s: ShareableRecord,
  read: AccessRequestRecord | undefined,
  nowMs: number,
): Decision<ResendDecision> {
  if (read?.status !== 'pending') return accept({ status: 'no_pending_request', next_resend_at: null });
  const nextAllowed = Date.parse(read.last_email_sent_at) + RESEND_WINDOW_MS;
  if (nowMs < nextAllowed) return accept({ status: 'throttled', next_resend_at: new Date(nextAllowed).toISOString() });
  const now = new Date(nowMs).toISOString();
  return accept({
    status: 'resent',
    next_resend_at: new Date(nowMs + RESEND_WINDOW_MS).toISOString(),
    sent: { ...read, last_email_sent_at: now },
    notice: noticeOf(caller, s, 'access_request.resent', now),
  });
}
