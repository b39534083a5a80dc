import { nowIso } from '#shared/clock.ts';
import { createEntity, mutateEntity } from '#shared/db/commands.ts';
import { newId } from '#shared/ids.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { requireShareableType, shareableAccess, type ShareableAccess } from '#shared/domain/sharing/access.ts';
import { loadShareable } from '#shared/domain/sharing/load-shareable.ts';
import { checkGrantAllowed, decideCreateShareable, decideGrant, decideView, type GrantCommand, type ShareableCreate } from '#shared/domain/sharing/decide.ts';
import { shareableEntity, type ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { addGrantRequestEffect } from '#shared/domain/sharing/requests.ts';
import { resourceUuidOf, shareableNotFound, type ShareablePath } from '#shared/domain/sharing/types.ts';
import { userEntity } from '#shared/domain/users/entity.ts';

/** Shareable resources (contract section 8 extension): create, read, and grant levels to users. Rules in decide.ts. */

export async function createShareable(ctx: DomainCtx, path: ShareablePath, input: ShareableCreate): Promise<{ record: ShareableRecord; access: ShareableAccess }> {
  const record = await createEntity(ctx, shareableEntity, decideCreateShareable(ctx.caller, path, input, nowIso(), newId()));
  return { record, access: shareableAccess(ctx.caller, record) };
}

/** A resource the caller can at least view: 404 when not in the tenant, 403 without owner, admin or grant. */
export async function getShareable(ctx: DomainCtx, path: ShareablePath, shareableUuid: string): Promise<{ record: ShareableRecord; access: ShareableAccess }> {
  const { record } = await loadShareable(ctx, path, shareableUuid);
  return { record, access: decideView(ctx.caller, record, path) };
}

/**
 * Sets (or, with level null, revokes) a user's grant. A grant that satisfies the grantee's pending access
 * request resolves it in the same transaction. Every check runs on the consistent read the write is
 * conditioned on: one read of the resource, not a second one up front.
 */
export async function setGrant(ctx: DomainCtx, path: ShareablePath, shareableUuid: string, input: GrantCommand): Promise<{ record: ShareableRecord; access: ShareableAccess }> {
  // Stored uuids are lower-case; the body's uuid may not be (the schema accepts either case, as paths do).
  const granteeUuid = input.user_uuid.toLowerCase();
  const { after } = await mutateEntity(
    ctx,
    shareableEntity,
    resourceUuidOf(ctx.tenantId, shareableUuid, path),
    async (current, tx) => {
      const s = current.record;
      requireShareableType(s, path, shareableUuid);
      // Checked on the record being written: a concurrent grant may have removed the caller's manage level.
      checkGrantAllowed(ctx.caller, s);
      const grantee = await ctx.loader.one(userEntity, granteeUuid); // cached: a retry does not read it again
      const now = nowIso();
      const { next, unchanged } = decideGrant(ctx.caller, s, input, grantee, now);
      const resolved = await addGrantRequestEffect(ctx, tx, s, granteeUuid, input.level, now);
      // Nothing to write unless the grant changed or it resolves a request.
      if (unchanged && !resolved) return undefined;
      return { ...next, updated_at: now };
    },
    () => shareableNotFound(path, shareableUuid),
  );
  return { record: after, access: shareableAccess(ctx.caller, after) };
}

