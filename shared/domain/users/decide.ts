/**
 * Users: the rules of each command as pure functions (no I/O, no clock, no id generation). service.ts
 * reads what they need, calls them, and writes once.
 *
 * Permissions: admins change anything. A member changes its own display name, avatar and profile only (not
 * role, status, manager or license); a viewer changes nothing. Nobody removes their own admin role or
 * deactivates themselves. The manager must be a user of the tenant and the manager chain must not loop
 * back to the user. A tenant always keeps an active admin (contract section 19): a change that would leave it
 * none is 409 `last_admin`, whoever sends it and through whichever door (decideActiveAdmins).
 */
import { isAdmin, type Caller } from '#shared/auth/caller.ts';
import { accept, refuse, type Decision } from '#shared/decision.ts';
import { newUserRecord, type Role, type UserRecord, type UserStatus } from '#shared/domain/users/entity.ts';
import { AppError, ForbiddenError, NotFoundError, ValidationError } from '#shared/errors.ts';

export interface UserProfileInput {
  display_name?: string;
  avatar_url?: string | null;
  profile_attributes?: UserRecord['profile_attributes'];
}

export interface UserCreate extends UserProfileInput {
  email: string;
  role?: Role;
  status?: UserStatus;
  manager_uuid?: string | null;
  license_type?: string;
  /** SCIM provisioning only (the REST bodies have no such field): the identity provider's id of the user. */
  scim_external_id?: string | null;
}

/** Fields left undefined are unchanged; `null` clears. `email` is changed by SCIM provisioning only (its userName). */
export type UserUpdate = Partial<UserCreate>;

/**
 * The longest manager chain a manager change accepts: every user on it is version-checked in the change's
 * one transaction (DynamoDB: at most 100 items), so concurrent changes cannot close a cycle.
 */
export const MAX_MANAGER_CHAIN = 90;

export const userNotFound = (id: string) => new NotFoundError('User', id);
const managerNotFound = (managerUuid: string) =>
  ValidationError.field('manager_uuid', 'not_found', `manager_uuid ${managerUuid} is not a user of this tenant`);

/** Null and undefined profile values are not stored. */
const compact = <T extends Record<string, unknown>>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as T;

/** Admins only: a create's precheck (and a replayed create's gate), answered before anything is read. */
export const userCreateRefusal = (caller: Caller): AppError | undefined =>
  isAdmin(caller) ? undefined : new ForbiddenError('Only admins can create users');

/** `manager` is the user named by manager_uuid as read (undefined: none of the tenant); userCreateRefusal answered before. */
export function decideCreateUser(
  caller: Caller,
  cmd: UserCreate,
  manager: UserRecord | undefined,
  now: string,
  uuid: string,
): Decision<UserRecord> {
  // A new user is in no one's chain, so its create checks the manager's existence only.
  if (cmd.manager_uuid && !manager) return refuse(managerNotFound(cmd.manager_uuid));
  return accept(
    newUserRecord({ ...cmd, profile_attributes: compact(cmd.profile_attributes ?? {}), creator_uuid: caller.userId }, now, uuid),
  );
}

/**
 * Who may send this update, decided before the user is read: a non-admin changing someone else (or a viewer
 * changing itself) only learns whether the user exists (404, else 403: `target` says, see
 * updateNeedsExistenceProbe); restricted fields and self lock-out are refused outright.
 */
export function updateRefusal(caller: Caller, id: string, cmd: UserUpdate, target?: { exists: boolean }): AppError | undefined {
  const admin = isAdmin(caller);
  if (!admin) {
    const self = id === caller.userId;
    if (!self || caller.role === 'viewer') {
      // Reveal existence only through 403 for users that exist in this tenant.
      if (!target?.exists) return userNotFound(id);
      return new ForbiddenError(self ? 'Viewers cannot change their profile' : 'Only admins can update other users');
    }
    const restricted = (['role', 'status', 'manager_uuid', 'license_type', 'email', 'scim_external_id'] as const).filter(
      (k) => cmd[k] !== undefined,
    );
    if (restricted.length) return new ForbiddenError(`Only admins can change ${restricted.join(', ')}`);
  }
  if (id === caller.userId && ((cmd.role && cmd.role !== 'admin' && admin) || cmd.status === 'inactive')) {
    return ValidationError.field(
      cmd.status === 'inactive' ? 'status' : 'role',
      'self_lockout',
      'You cannot remove your own admin role or deactivate yourself',
    );
  }
  return undefined;
}

/** Whether the caller may change `id` without reading it first (else updateRefusal needs `target`). */
export const updateNeedsExistenceProbe = (caller: Caller, id: string) =>
  !isAdmin(caller) && (id !== caller.userId || caller.role === 'viewer');

/** The manager change needs the new manager's chain read (see managerChainRefusal). */
export const changesManager = (current: UserRecord, cmd: UserUpdate): cmd is UserUpdate & { manager_uuid: string } =>
  !!cmd.manager_uuid && cmd.manager_uuid !== current.manager_uuid;

/**
 * `chain` is the new manager followed by its managers, nearest first, as read (empty: the manager is not a
 * user of the tenant; read up to MAX_MANAGER_CHAIN + 1 users). Refuses the user itself anywhere on it, and
 * a chain longer than MAX_MANAGER_CHAIN.
 */
export function managerChainRefusal(userUuid: string, managerUuid: string, chain: UserRecord[]): AppError | undefined {
  if (managerUuid === userUuid) return ValidationError.field('manager_uuid', 'cycle', 'A user cannot be their own manager');
  if (!chain.length) return managerNotFound(managerUuid);
  if (chain.length > MAX_MANAGER_CHAIN)
    return ValidationError.field('manager_uuid', 'too_many', `A management chain may be at most ${MAX_MANAGER_CHAIN} users long`);
  if (chain.some((u) => u.manager_uuid === userUuid || u.uuid === userUuid))
    return ValidationError.field('manager_uuid', 'cycle', 'This manager would create a management cycle');
  return undefined;
}

/** The updated record (updateRefusal and, when the manager changes, managerChainRefusal have passed). */
export function applyUserUpdate(current: UserRecord, cmd: UserUpdate, now: string): UserRecord {
  const { profile_attributes, email, ...rest } = cmd;
  const sent = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  if (email !== undefined) sent.email = email.trim();
  return {
    ...current,
    ...sent,
    profile_attributes: compact({ ...current.profile_attributes, ...(profile_attributes ?? {}) }),
    updated_at: now,
  };
}

/**
 * A user update once read: the user as stored, and, when the manager changes, the new manager's chain as read
 * (`chain`, see managerChainRefusal). The update's precheck (updateRefusal) has passed before the reads.
 */
export function decideUpdateUser(current: UserRecord, cmd: UserUpdate, chain: UserRecord[] | undefined, now: string): Decision<UserRecord> {
  const refusal = changesManager(current, cmd) ? managerChainRefusal(current.uuid, cmd.manager_uuid, chain ?? []) : undefined;
  return refusal ? refuse(refusal) : accept(applyUserUpdate(current, cmd, now));
}

/** An active admin: what a tenant must always keep one of (contract section 19). */
export const isActiveAdmin = (u: Pick<UserRecord, 'role' | 'status'>) => u.role === 'admin' && u.status === 'active';

/** Whether an update may change who the tenant's active admins are (it sends a role or a status): its read reads them. */
export const mayMoveAdmins = (cmd: UserUpdate) => cmd.role !== undefined || cmd.status !== undefined;

/** Whether applying `cmd` to `current` makes it an active admin or makes it stop being one. */
export const movesAdmins = (current: UserRecord, cmd: UserUpdate) =>
  isActiveAdmin(current) !== isActiveAdmin({ role: cmd.role ?? current.role, status: cmd.status ?? current.status });

/** 409 `last_admin`: the change would leave the tenant without an active admin; `field` is what it changed. */
export class LastAdminError extends AppError {
  constructor(field: 'role' | 'status') {
    const message = 'A tenant keeps at least one active admin: make another user an admin first';
    super(409, 'last_admin', message, [{ field, code: 'last_admin', message: `this user is the tenant's last active admin` }]);
  }
}

/** The field a refused demotion or deactivation names: the status when the update deactivates, else the role. */
export const lastAdminField = (cmd: UserUpdate): 'role' | 'status' => (cmd.status === 'inactive' ? 'status' : 'role');

/**
 * The tenant's active admins once `before` (undefined: a new user) becomes `after`: `admins` is the list as read
 * with its version (shared/domain/users/admins.ts), which the write is conditioned on, so two changes that read the
 * same list cannot both remove from it. Undefined: the change moves no one in or out (nothing to write). Refused
 * with 409 last_admin when it would leave the list empty.
 */
export function decideActiveAdmins(
  admins: readonly string[],
  before: UserRecord | undefined,
  after: UserRecord,
  field: 'role' | 'status',
): Decision<string[] | undefined> {
  const was = before !== undefined && isActiveAdmin(before);
  const is = isActiveAdmin(after);
  if (was === is) return accept(undefined);
  const others = admins.filter((uuid) => uuid !== after.uuid);
  if (is) return accept([...others, after.uuid].sort());
  return others.length ? accept(others) : refuse(new LastAdminError(field));
}
