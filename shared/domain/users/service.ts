import type { z } from 'zod';
import { isAdmin } from '#shared/auth/caller.ts';
import { requireAdmin, type AccessSource, type Checks } from '#shared/auth/permissions.ts';
import { getEntity, mutateEntity, nowIso, createEntity } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { sentFields } from '#shared/domain/fields.ts';
import { newUserRecord, userEntity, type UserRecord } from '#shared/domain/users/entity.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '#shared/errors.ts';
import type { UserCreateBody, UserUpdateBody } from '#shared/schemas/users.ts';

export type UserCreateInput = z.infer<typeof UserCreateBody>['user'];
export type UserUpdateInput = z.infer<typeof UserUpdateBody>['user'];

const notFound = (id: string) => new NotFoundError('User', id);

export async function getUser(ctx: DomainCtx, id: string): Promise<UserRecord> {
  const user = await ctx.loader.one(userEntity, id);
  if (!user) throw notFound(id);
  return user;
}

const managerNotFound = (managerUuid: string) => ValidationError.field('manager_uuid', 'not_found', `manager_uuid ${managerUuid} is not a user of this tenant`);

/**
 * The manager must be a user of the tenant, and the manager chain must not loop back to the user. (A new
 * user is in no one's chain, so its create checks existence only: see createUser.)
 */
async function checkManagerChain(ctx: DomainCtx, userUuid: string, managerUuid: string): Promise<void> {
  if (managerUuid === userUuid) throw ValidationError.field('manager_uuid', 'cycle', 'A user cannot be their own manager');
  let current = await ctx.loader.one(userEntity, managerUuid);
  if (!current) throw managerNotFound(managerUuid);
  for (let hops = 0; current?.manager_uuid && hops < 100; hops++) {
    if (current.manager_uuid === userUuid) throw ValidationError.field('manager_uuid', 'cycle', 'This manager would create a management cycle');
    current = await ctx.loader.one(userEntity, current.manager_uuid);
  }
}

export async function createUser(ctx: DomainCtx, input: UserCreateInput): Promise<UserRecord> {
  requireAdmin(ctx.caller, 'Only admins can create users');
  const record = newUserRecord({ ...input, profile_attributes: compact(input.profile_attributes ?? {}), creator_uuid: ctx.caller.userId }, nowIso());
  if (record.manager_uuid && !(await ctx.loader.one(userEntity, record.manager_uuid))) throw managerNotFound(record.manager_uuid);
  return createEntity(ctx, userEntity, record);
}

/**
 * Admins change anything. A member changes its own display name, avatar and profile only (not role,
 * status, manager or license); a viewer changes nothing.
 */
export async function updateUser(ctx: DomainCtx, id: string, input: UserUpdateInput): Promise<UserRecord> {
  const admin = isAdmin(ctx.caller);
  if (!admin) {
    const self = id === ctx.caller.userId;
    if (!self || ctx.caller.role === 'viewer') {
      // Reveal existence only through 403 for users that exist in this tenant.
      if (!(await getEntity(ctx, userEntity, id))) throw notFound(id);
      throw new ForbiddenError(self ? 'Viewers cannot change their profile' : 'Only admins can update other users');
    }
    const restricted = (['role', 'status', 'manager_uuid', 'license_type'] as const).filter((k) => input[k] !== undefined);
    if (restricted.length) throw new ForbiddenError(`Only admins can change ${restricted.join(', ')}`);
  }
  if (id === ctx.caller.userId && ((input.role && input.role !== 'admin' && admin) || input.status === 'inactive')) {
    throw ValidationError.field(input.status === 'inactive' ? 'status' : 'role', 'self_lockout', 'You cannot remove your own admin role or deactivate yourself');
  }
  const { after } = await mutateEntity(
    ctx,
    userEntity,
    id,
    async (current) => {
      if (input.manager_uuid && input.manager_uuid !== current.record.manager_uuid) await checkManagerChain(ctx, id, input.manager_uuid);
      const { profile_attributes, ...rest } = input;
      return {
        ...current.record,
        ...sentFields(rest),
        profile_attributes: compact({ ...current.record.profile_attributes, ...(profile_attributes ?? {}) }),
        updated_at: nowIso(),
      } as UserRecord;
    },
    () => notFound(id),
  );
  return after;
}

const compact = <T extends Record<string, unknown>>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as T;

export const presentUser = (u: UserRecord) => ({
  uuid: u.uuid,
  email: u.email,
  display_name: u.display_name,
  account_id: u.account_id,
  status: u.status,
  role: u.role,
  manager_uuid: u.manager_uuid,
  path: u.path,
  creator_uuid: u.creator_uuid,
  license_type: u.license_type,
  display_name_source: u.display_name_source,
  avatar_url: u.avatar_url,
  external_employee_id: u.external_employee_id,
  profile_attributes: u.profile_attributes,
  created_at: u.created_at,
  updated_at: u.updated_at,
});

export function userChecks(ctx: DomainCtx, u: UserRecord): Checks {
  const admin = isAdmin(ctx.caller);
  const self = u.uuid === ctx.caller.userId && ctx.caller.role !== 'viewer';
  return { can_update: admin || self, can_update_role: admin, can_update_status: admin };
}

export const userAccessSource = (ctx: DomainCtx): AccessSource => (isAdmin(ctx.caller) ? 'admin' : 'public');
export const userCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: isAdmin(ctx.caller) });
