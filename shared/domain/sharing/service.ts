import { canWriteContent } from '#shared/auth/caller.ts';
import { createEntity, mutateEntity, nowIso } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { canManageGrants, loadShareable, requireShareableType, shareableAccess, type ShareableAccess } from '#shared/domain/sharing/access.ts';
import { MAX_GRANTS, MAX_MANAGERS, shareableEntity, type Grant, type ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { resolveByGrant } from '#shared/domain/sharing/requests.ts';
import { PATH_BY_SHAREABLE_TYPE, resourceUuidOf, SHAREABLE_TYPE_BY_PATH, shareableName, shareableNotFound, type Level, type ShareablePath } from '#shared/domain/sharing/types.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { ForbiddenError, ValidationError } from '#shared/errors.ts';

/** Shareable resources (contract section 8 extension): create, read, and grant levels to users. */

export async function createShareable(ctx: DomainCtx, path: ShareablePath, input: { title: string; content?: string | null }): Promise<{ record: ShareableRecord; access: ShareableAccess }> {
  if (!canWriteContent(ctx.caller)) throw new ForbiddenError('Viewers cannot create shareable resources');
  const now = nowIso();
  const record: ShareableRecord = {
    uuid: crypto.randomUUID(),
    type: SHAREABLE_TYPE_BY_PATH[path],
    title: input.title,
    content: input.content ?? null,
    owner_uuid: ctx.caller.userId,
    grants: [],
    created_at: now,
    updated_at: now,
  };
  await createEntity(ctx, shareableEntity, record);
  return { record, access: shareableAccess(ctx.caller, record) };
}

/** A resource the caller can at least view: 404 when not in the tenant, 403 without owner, admin or grant. */
export async function getShareable(ctx: DomainCtx, path: ShareablePath, shareableUuid: string): Promise<{ record: ShareableRecord; access: ShareableAccess }> {
  const { record } = await loadShareable(ctx, path, shareableUuid);
  const access = shareableAccess(ctx.caller, record);
  if (!access.level) throw new ForbiddenError(`You have no access to this ${shareableName(record.type)}; request it with POST /${path}/${record.uuid}/access_requests`);
  return { record, access };
}

/**
 * Sets (or, with level null, revokes) a user's grant. Owner, admins and `manage` grantees only. A grant
 * that satisfies the grantee's pending access request resolves it in the same transaction. Every check runs
 * on the consistent read the write is conditioned on: one read of the resource, not a second one up front.
 */
export async function setGrant(ctx: DomainCtx, path: ShareablePath, shareableUuid: string, input: { user_uuid: string; level: Level | null }): Promise<{ record: ShareableRecord; access: ShareableAccess }> {
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
      if (!canManageGrants(ctx.caller, shareableAccess(ctx.caller, s))) throw new ForbiddenError('Only the owner and users with manage access can change grants');
      const grantee = await ctx.loader.one(userEntity, granteeUuid); // cached: a retry does not read it again
      if (!grantee) throw ValidationError.field('user_uuid', 'not_found', `user_uuid ${input.user_uuid} is not a user of this tenant`);
      if (grantee.uuid === s.owner_uuid) throw ValidationError.field('user_uuid', 'owner', 'The owner already holds every level');
      const now = nowIso();
      const existing = s.grants.find((g) => g.user_uuid === grantee.uuid);
      const unchanged = (existing?.level ?? null) === input.level;
      const grant: Grant | undefined = input.level === null ? undefined : unchanged ? existing : { user_uuid: grantee.uuid, level: input.level, granted_by_uuid: ctx.caller.userId, granted_at: now };
      // An existing grant keeps its place in the list; a new one goes last.
      const grants = !grant ? s.grants.filter((g) => g !== existing) : existing ? s.grants.map((g) => (g === existing ? grant : g)) : [...s.grants, grant];
      if (grants.length > MAX_GRANTS) throw ValidationError.field('user_uuid', 'too_many', `A resource holds at most ${MAX_GRANTS} grants`);
      if (grants.filter((g) => g.level === 'manage').length > MAX_MANAGERS) throw ValidationError.field('level', 'too_many', `A resource has at most ${MAX_MANAGERS} users with manage access`);
      const resolved = await resolveByGrant(ctx, tx, s, grantee.uuid, input.level, now);
      // Nothing to write unless the grant changed or it resolves a request.
      if (unchanged && !resolved) return undefined;
      return { ...s, grants, updated_at: now };
    },
    () => shareableNotFound(path, shareableUuid),
  );
  return { record: after, access: shareableAccess(ctx.caller, after) };
}

export const presentShareable = (s: ShareableRecord) => ({
  uuid: s.uuid,
  type: s.type,
  shareable_type: PATH_BY_SHAREABLE_TYPE[s.type],
  title: s.title,
  content: s.content,
  owner_uuid: s.owner_uuid,
  grants: s.grants.map((g) => ({ user_uuid: g.user_uuid, level: g.level, granted_by_uuid: g.granted_by_uuid, granted_at: g.granted_at })),
  created_at: s.created_at,
  updated_at: s.updated_at,
});
