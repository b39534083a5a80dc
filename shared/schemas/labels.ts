import * as z from 'zod';
import { listEnvelope, recordEnvelope } from '#shared/schemas/common.ts';

/** The label bodies are built in shared/schemas/bodies/label-*.ts (a handler loads its own on first use); re-exported for the route table. */
export { LabelCreateBody } from '#shared/schemas/bodies/label-create.ts';
export { LabelUpdateBody } from '#shared/schemas/bodies/label-update.ts';

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
