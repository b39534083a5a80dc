import * as z from 'zod';
import { PROFILE_FILTERABLE, PROFILE_WRITABLE, ROLES, USER_STATUSES } from '#shared/domain/users/entity.ts';
import { listEnvelope, nonBlank, recordEnvelope, uuid } from '#shared/schemas/common.ts';

const profileAttributes = z.strictObject(Object.fromEntries(PROFILE_WRITABLE.map((k) => [k, z.string().max(2000).nullable().optional()])) as Record<(typeof PROFILE_WRITABLE)[number], z.ZodOptional<z.ZodNullable<z.ZodString>>>);

const userFields = {
  display_name: nonBlank(200),
  // http(s) only: clients render it, and z.url() alone takes javascript: and data: URLs
  avatar_url: z.url({ protocol: /^https?$/ }).max(2000).nullable(),
  status: z.enum(USER_STATUSES),
  manager_uuid: uuid.nullable(),
  license_type: nonBlank(50),
  role: z.enum(ROLES),
  profile_attributes: profileAttributes,
};

export const UserCreateBody = z
  .strictObject({ user: z.strictObject({ email: z.email().max(320), ...Object.fromEntries(Object.entries(userFields).map(([k, v]) => [k, v.optional()])) } as { email: z.ZodEmail } & { [K in keyof typeof userFields]: z.ZodOptional<(typeof userFields)[K]> }) })
  .meta({ id: 'UserCreateBody' });

export const UserUpdateBody = z
  .strictObject({ user: z.strictObject(Object.fromEntries(Object.entries(userFields).map(([k, v]) => [k, v.optional()])) as { [K in keyof typeof userFields]: z.ZodOptional<(typeof userFields)[K]> }) })
  .meta({ id: 'UserUpdateBody' });

export const UserRecordSchema = z
  .object({
    uuid: z.string(),
    email: z.string(),
    display_name: z.string(),
    account_id: z.string().nullable(),
    status: z.string(),
    role: z.enum(ROLES),
    manager_uuid: z.string().nullable(),
    path: z.string().nullable(),
    creator_uuid: z.string().nullable(),
    license_type: z.string(),
    display_name_source: z.string(),
    avatar_url: z.string().nullable(),
    external_employee_id: z.string().nullable(),
    profile_attributes: z.record(z.enum([...new Set([...PROFILE_WRITABLE, ...PROFILE_FILTERABLE])] as [string, ...string[]]), z.string().nullable()),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'User' });

export const UserResponse = recordEnvelope('user', UserRecordSchema);
export const UserListResponse = listEnvelope('user', UserRecordSchema);
