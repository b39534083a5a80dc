import * as z from 'zod';
import { PROFILE_WRITABLE, ROLES, USER_STATUSES } from '#shared/domain/users/entity.ts';
import { nonBlank, uuid } from '#shared/schemas/bodies/fields.ts';

/** The fields the user bodies share (user-create.ts, user-update.ts). */
const profileAttributes = z.strictObject(
  Object.fromEntries(PROFILE_WRITABLE.map((k) => [k, z.string().max(2000).nullable().optional()])) as Record<
    (typeof PROFILE_WRITABLE)[number],
    z.ZodOptional<z.ZodNullable<z.ZodString>>
  >,
);

export const userFields = {
  display_name: nonBlank(200),
  // http(s) only: clients render it, and z.url() alone takes javascript: and data: URLs
  avatar_url: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .nullable(),
  status: z.enum(USER_STATUSES),
  manager_uuid: uuid.nullable(),
  license_type: nonBlank(50),
  role: z.enum(ROLES),
  profile_attributes: profileAttributes,
};
