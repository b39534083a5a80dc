import * as z from 'zod';
import { labelFields } from '#shared/schemas/bodies/label-fields.ts';

export const LabelUpdateBody = z
  .strictObject({
    name: labelFields.name.optional(),
    is_group: labelFields.is_group.optional(),
    parent_uuid: labelFields.parent_uuid.optional(),
    color: labelFields.color.optional(),
  })
  .meta({ id: 'LabelUpdateBody', description: 'is_group cannot be turned off while the group has child labels.' });
