import * as z from 'zod';
import { LABEL_NAME_MAX } from '#shared/domain/labels/entity.ts';
import { listEnvelope, nonBlank, recordEnvelope, uuid } from '#shared/schemas/common.ts';

/**
 * Label bodies are flat (contract section 10): `{ name, is_group, parent_uuid, color }`. `color` is free
 * text (a hex code or a palette name): the service stores it and never interprets it.
 */
const labelFields = {
  name: nonBlank(LABEL_NAME_MAX),
  is_group: z.boolean(),
  parent_uuid: uuid.nullable().meta({ description: 'A label group of the tenant; null for none. Groups nest (a group may sit in a group); a label is never under itself (422 cycle).' }),
  color: nonBlank(50).nullable(),
};

export const LabelCreateBody = z
  .strictObject({ name: labelFields.name, is_group: labelFields.is_group.optional(), parent_uuid: labelFields.parent_uuid.optional(), color: labelFields.color.optional() })
  .meta({ id: 'LabelCreateBody' });

export const LabelUpdateBody = z
  .strictObject({ name: labelFields.name.optional(), is_group: labelFields.is_group.optional(), parent_uuid: labelFields.parent_uuid.optional(), color: labelFields.color.optional() })
  .meta({ id: 'LabelUpdateBody', description: 'is_group cannot be turned off while the group has child labels.' });

export const LabelRecordSchema = z
  .object({
    uuid: z.string(),
    name: z.string(),
    is_group: z.boolean(),
    parent_uuid: z.string().nullable(),
    color: z.string().nullable(),
    creator_uuid: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Label' });

export const LabelResponse = recordEnvelope('label', LabelRecordSchema);
export const LabelListResponse = listEnvelope('label', LabelRecordSchema);
