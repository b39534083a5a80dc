import * as z from 'zod';
import { levelInput } from '#shared/schemas/bodies/sharing-fields.ts';

export const AccessRequestBody = z
  .strictObject({
    requested_level: levelInput,
    message: z
      .string()
      .max(2000)
      .optional()
      .meta({ description: "Shown to the recipients; replaces the pending request's message when given; blank clears it" }),
  })
  .meta({ id: 'AccessRequestBody' });
