import * as z from 'zod';
import { IMPORT_MAX_ROWS, IMPORT_STATES } from '#shared/domain/imports/entity.ts';
import { GOAL_KINDS } from '#shared/domain/goals/entity.ts';
import type { ImportRow, ParsedRow } from '#shared/domain/imports/validate.ts';
import { uuid } from '#shared/schemas/common.ts';
import { GOAL_LIMITS, GoalCreateBody } from '#shared/schemas/goals.ts';
import { listEnvelope, recordEnvelope } from '#shared/schemas/common.ts';

const goal = GoalCreateBody.shape;

/** One import row (contract 13): the goal create body's fields and caps, plus `ref`, `kind` and the parents by ref. */
export const ImportRowSchema = z
  .strictObject({
    ref: z.string().trim().min(1, 'must not be blank').max(100, 'must be at most 100 characters'),
    kind: z.enum(GOAL_KINDS),
    title: goal.title,
    time_period_uuid: goal.time_period_uuid,
    description: goal.description,
    goal_type: goal.goal_type,
    owner_uuids: goal.owner_uuids,
    team_uuids: goal.team_uuids,
    labels: goal.labels,
    parent_refs: z.array(z.string().trim().min(1)).max(GOAL_LIMITS.parents, `at most ${GOAL_LIMITS.parents} parents`).optional().meta({ description: 'refs of earlier rows of the same import' }),
    parents: z.array(uuid).max(GOAL_LIMITS.parents, `at most ${GOAL_LIMITS.parents} parents`).optional().meta({ description: 'existing goal uuids' }),
    metric: goal.metric,
  })
  .meta({ id: 'ImportRow' });

/** The wire row maps onto the domain's ImportRow: a drift fails the build here. */
const toImportRow = (row: z.infer<typeof ImportRowSchema>): ImportRow => row;

/** Checks one stored row against the wire shape (the import worker's RowParser): the row, or each field's problem. */
export function parseImportRow(raw: unknown): ParsedRow {
  const parsed = ImportRowSchema.safeParse(raw);
  if (parsed.success) return { row: toImportRow(parsed.data) };
  return {
    problems: parsed.error.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys' ? issue.keys.map((k) => ({ field: k, message: `unknown field ${k}` })) : [{ field: issue.path.map(String).join('.') || 'row', message: issue.message }],
    ),
  };
}

export const ImportBody = z
  .strictObject({ goals: z.array(ImportRowSchema).min(1).max(IMPORT_MAX_ROWS) })
  .meta({
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
    errors: z.array(z.object({ row: z.number().int().meta({ description: '1-based row (CSV: data row, header not counted); 0 for the import as a whole.' }), field: z.string(), message: z.string() })),
    error_count: z.number().int().meta({ description: 'Extension: all errors; list records carry at most the first 100 in errors.' }),
    created: z.record(z.string(), z.string()).nullable().meta({ description: 'ref → goal uuid, once succeeded (null before, and in lists).' }),
    creator_uuid: z.string(),
    created_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'Import' });

export const ImportResponse = recordEnvelope('import', ImportRecordSchema);
export const ImportListResponse = listEnvelope('import', ImportRecordSchema);
