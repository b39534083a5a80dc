import * as z from 'zod';
import { LABEL_NAME_MAX } from '#shared/domain/labels/entity.ts';
import { nonBlank, uuid } from '#shared/schemas/bodies/fields.ts';

/**
 * Label bodies are flat (contract section 10): `{ name, is_group, parent_uuid, color }`. `color` is free
 * text (a hex code or a palette name): the service stores it and never interprets it.
 */
export const labelFields = {
  name: nonBlank(LABEL_NAME_MAX),
  is_group: z.boolean(),
  parent_uuid: uuid.nullable().meta({
    description:
      'A label group of the tenant; null for none. Groups nest (a group may sit in a group); a label is never under itself (422 cycle).',
  }),
  color: nonBlank(50).nullable(),
};
