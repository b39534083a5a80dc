import * as z from 'zod';
import { PROFILE_FILTERABLE, PROFILE_WRITABLE, ROLES } from '#shared/domain/users/entity.ts';
import { listEnvelope, recordEnvelope } from '#shared/schemas/common.ts';

/** The user bodies are built in shared/schemas/bodies/user-*.ts (a handler loads its own on first use); re-exported for the route table. */
export { UserCreateBody } from '#shared/schemas/bodies/user-create.ts';
export { UserUpdateBody } from '#shared/schemas/bodies/user-update.ts';

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
    // the keys that are set, each one of these names (a plain record keyed by an enum would require every key)
    profile_attributes: z.partialRecord(
      z.enum([...new Set([...PROFILE_WRITABLE, ...PROFILE_FILTERABLE])] as [string, ...string[]]),
      z.string().nullable(),
    ),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'User' });

export const UserResponse = recordEnvelope('user', UserRecordSchema);
export const UserListResponse = listEnvelope('user', UserRecordSchema);
