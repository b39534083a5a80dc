import { entryList } from '#shared/db/entry-lists.ts';
import { entry, type BaseRecord, type EntityDef } from '#shared/db/model.ts';
import { newId } from '#shared/ids.ts';
import { TakenError } from '#shared/errors.ts';

export const ROLES = ['admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
export const USER_STATUSES = ['active', 'inactive'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

export const PROFILE_WRITABLE = ['first_name', 'last_name', 'job_title', 'timezone', 'locale', 'about'] as const;
export const PROFILE_FILTERABLE = [
  'first_name',
  'last_name',
  'job_title',
  'employee_type',
  'department_name',
  'division_name',
  'cost_center_name',
  'about',
  'custom_field_1',
  'custom_field_2',
  'custom_field_3',
  'custom_field_4',
  'custom_field_5',
] as const;

export interface UserRecord extends BaseRecord {
  email: string;
  display_name: string;
  account_id: string | null;
  status: UserStatus;
  role: Role;
  manager_uuid: string | null;
  path: string | null;
  creator_uuid: string | null;
  license_type: string;
  display_name_source: string;
  avatar_url: string | null;
  external_employee_id: string | null;
  profile_attributes: Partial<Record<(typeof PROFILE_WRITABLE)[number] | (typeof PROFILE_FILTERABLE)[number], string | null>>;
  /** The identity provider's id of the user (SCIM `externalId`), set by SCIM provisioning only; absent on older records. */
  scim_external_id?: string | null;
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** The users reporting to a manager (`user@manager#<manager>`). */
export const reportsOf = entryList('user', 'manager');
/** The users an identity provider knows by one SCIM `externalId` (`user@external_id#<id>`): SCIM's `externalId eq` filter. */
export const usersByExternalId = entryList('user', 'external_id');

export const userEntity: EntityDef<UserRecord> = {
  type: 'user',
  entries: (u) => [
    ...(u.manager_uuid ? [entry(reportsOf, u.manager_uuid)] : []),
    ...(u.scim_external_id ? [entry(usersByExternalId, u.scim_external_id)] : []),
  ],
  uniques: (u) => [
    {
      name: 'email',
      value: normalizeEmail(u.email),
      onTaken: () => new TakenError('email', `A user with email ${u.email} already exists`),
    },
  ],
  envelope: (u) => ({ state: u.status }),
};

/** A user record with every field set (null when unset); `display_name` defaults to the e-mail's local part. */
export function newUserRecord(
  input: Partial<Omit<UserRecord, 'uuid' | 'created_at' | 'updated_at'>> & { email: string; creator_uuid: string | null },
  now: string,
  uuid: string = newId(),
): UserRecord {
  const email = input.email.trim();
  return {
    uuid,
    email,
    display_name: input.display_name ?? email.split('@')[0]!,
    account_id: input.account_id ?? null,
    status: input.status ?? 'active',
    role: input.role ?? 'member',
    manager_uuid: input.manager_uuid ?? null,
    path: input.path ?? null,
    creator_uuid: input.creator_uuid,
    license_type: input.license_type ?? 'full',
    display_name_source: input.display_name_source ?? 'manual',
    avatar_url: input.avatar_url ?? null,
    external_employee_id: input.external_employee_id ?? null,
    profile_attributes: input.profile_attributes ?? {},
    ...(input.scim_external_id ? { scim_external_id: input.scim_external_id } : {}),
    created_at: now,
    updated_at: now,
  };
}
