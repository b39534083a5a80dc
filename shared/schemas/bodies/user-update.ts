import * as z from 'zod';
import { userFields } from '#shared/schemas/bodies/user-fields.ts';

export const UserUpdateBody = z
  .strictObject({
    user: z.strictObject(
      Object.fromEntries(Object.entries(userFields).map(([k, v]) => [k, v.optional()])) as {
        [K in keyof typeof userFields]: z.ZodOptional<(typeof userFields)[K]>;
      },
    ),
  })
  .meta({ id: 'UserUpdateBody' });
