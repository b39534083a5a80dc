import * as z from 'zod';
import { levelOrNullInput } from '#shared/schemas/bodies/sharing-fields.ts';
import { uuid } from '#shared/schemas/bodies/fields.ts';

export const GrantBody = z.strictObject({ user_uuid: uuid, level: levelOrNullInput }).meta({
  id: 'GrantBody',
  description:
    "Sets the user's level on the resource; null revokes it. A grant at or above the level of the user's pending access request resolves that request.",
});
