import * as z from 'zod';
import { userFields } from '#shared/schemas/bodies/user-fields.ts';

export const UserCreateBody = z
  .strictObject({
    user: z.strictObject({
      email: z.email().max(320),
      ...Object.fromEntries(Object.entries(userFields).map(([k, v]) => [k, v.optional()])),
    } as { email: z.ZodEmail } & { [K in keyof typeof userFields]: z.ZodOptional<(typeof userFields)[K]> }),
  })
  .meta({ id: 'UserCreateBody' });
