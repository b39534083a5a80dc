import * as z from 'zod';
import { labelFields } from '#shared/schemas/bodies/label-fields.ts';

export const LabelCreateBody = z
  .strictObject({
    name: labelFields.name,
    is_group: labelFields.is_group.optional(),
    parent_uuid: labelFields.parent_uuid.optional(),
    color: labelFields.color.optional(),
  })
  .meta({ id: 'LabelCreateBody' });
