import * as z from 'zod';
import { IMPORT_MAX_ROWS, IMPORT_STATES } from '#shared/domain/imports/entity.ts';
import { ImportRowSchema } from '#shared/schemas/import-row.ts';
import { listEnvelope, recordEnvelope } from '#shared/schemas/common.ts';

export { parseImportRow } from '#shared/schemas/import-row.ts';

export const ImportBody = z.strictObject({ goals: z.array(ImportRowSchema).min(1).max(IMPORT_MAX_ROWS) }).meta({
  id: 'ImportBody',
  description:
    `Up to ${IMPORT_MAX_ROWS} rows. Or send text/csv: a header row of the same names (list cells separated by |; the metric as a JSON cell \`metric\` or as \`metric.target_value\`, \`metric.start_value\`, \`metric.metric_type\`, \`metric.unit\`, \`metric.name\` columns). ` +
    'Rows are checked by the worker, all of them, before anything is created; the body itself (not { goals: [...] }, an unknown CSV column, no rows, too many rows) is refused at once (400/422).',
});

export const ImportRecordSchema = z
  .object({
    uuid: z.string(),
    state: z.enum(IMPORT_STATES),
    total: z.number().int(),
    done: z.number().int().meta({ description: 'Rows created so far (advances by batches while importing).' }),
    errors: z.array(
      z.object({
        row: z.number().int().meta({ description: '1-based row (CSV: data row, header not counted); 0 for the import as a whole.' }),
        field: z.string(),
        message: z.string(),
      }),
    ),
    error_count: z.number().int().meta({ description: 'Extension: all errors; list records carry at most the first 100 in errors.' }),
    created: z
      .record(z.string(), z.string())
      .nullable()
      .meta({ description: 'ref → goal uuid, once succeeded (null before, and in lists).' }),
    creator_uuid: z.string(),
    created_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'Import' });

export const ImportResponse = recordEnvelope('import', ImportRecordSchema);
export const ImportListResponse = listEnvelope('import', ImportRecordSchema);
