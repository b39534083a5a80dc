import { orStored, runCommand } from '#shared/command/run.ts';
import { newId } from '#shared/ids.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { decided, refuse } from '#shared/decision.ts';
import { shareableAccess, type ShareableAccess } from '#shared/domain/sharing/access.ts';
import { findShareable, loadShareable } from '#shared/domain/sharing/load-shareable.ts';
import {
  decideCreateShareable,
  decideGrant,
  decideSetGrant,
  decideView,
  grantRefusal,
  type GrantCommand,
  type ShareableCreate,
} from '#shared/domain/sharing/decide.ts';
import { shareableEntity, type ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { addGrantRequestEffect, grantedRequest } from '#shared/domain/sharing/requests.ts';
import { shareableNotFound, type ShareablePath } from '#shared/domain/sharing/types.ts';
import { userEntity } from '#shared/domain/users/entity.ts';

/** Shareable resources (contract section 8 extension): create, read, and grant levels to users. Rules in decide.ts. */

export async function createShareable(
  ctx: DomainCtx,
  path: ShareablePath,
  input: ShareableCreate,
): Promise<{ record: ShareableRecord; access: ShareableAccess }> {
  const uuid = newId();
  const record = await runCommand(ctx, {
    read: async () => undefined,
    decide: (_, now) => decideCreateShareable(ctx.caller, path, input, now, uuid),
    write: (tx, r) => (tx.create(shareableEntity, r), r),
    stored: orStored(shareableEntity, uuid, (stored) => stored),
  });
  return { record, access: shareableAccess(ctx.caller, record) };
}

/** A resource the caller can at least view: 404 when not in the tenant, 403 without owner, admin or grant. */
export async function getShareable(
  ctx: DomainCtx,
  path: ShareablePath,
  shareableUuid: string,
): Promise<{ record: ShareableRecord; access: ShareableAccess }> {
  const { record } = await loadShareable(ctx, path, shareableUuid);
  return { record, access: decided(decideView(ctx.caller, record, path)) };
}

/**
 * Sets (or, with level null, revokes) a user's grant. A grant that satisfies the grantee's pending access
 * request resolves it in the same transaction. Every check runs on the consistent read the write is
 * conditioned on: one read of the resource, not a second one up front.
 */
export async function setGrant(
  ctx: DomainCtx,
  path: ShareablePath,
  shareableUuid: string,
  input: GrantCommand,
): Promise<{ record: ShareableRecord; access: ShareableAccess }> {
  // Stored uuids are lower-case; the body's uuid may not be (the schema accepts either case, as paths do).
  const granteeUuid = input.user_uuid.toLowerCase();
  const record = await runCommand(ctx, {
    read: async ({ now }) => {
      const stored = await findShareable(ctx, path, shareableUuid, true);
      // Checked on the record being written (a concurrent grant may have removed the caller's manage level): nothing more is read for a refusal.
      if (!stored || grantRefusal(ctx.caller, stored.record)) return stored && { stored };
      const grantee = await ctx.loader.one(userEntity, granteeUuid); // cached: a retry does not read it again
      // a grant refused (unknown grantee, the owner, too many) reads no request
      const refused = 'error' in decideGrant(ctx.caller, stored.record, input, grantee, now);
      return { stored, grantee, request: refused ? undefined : await grantedRequest(ctx, stored.record, granteeUuid, input.level) };
    },
    decide: (read, now) =>
      read
        ? decideSetGrant(ctx.caller, read.stored.record, input, read.grantee, read.request?.record, now)
        : refuse(shareableNotFound(path, shareableUuid)),
    write: (tx, { next, resolved }, read) => {
      const { stored, request } = read!;
      // Nothing to write unless the grant changed or it resolves a request.
      if (!next) return stored.record;
      addGrantRequestEffect(ctx, tx, stored.record, granteeUuid, input.level, request, resolved);
      tx.replace(shareableEntity, stored, next);
      return next;
    },
  });
  return { record, access: shareableAccess(ctx.caller, record) };
}
