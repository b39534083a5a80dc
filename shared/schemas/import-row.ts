import * as z from 'zod';
import { GOAL_KINDS } from '#shared/domain/goals/entity.ts';
import { GOAL_LIMITS } from '#shared/domain/goals/rules.ts';
import type { ImportRow, ParsedRow } from '#shared/domain/imports/validate.ts';
import { uuid } from '#shared/schemas/bodies/fields.ts';
import { GoalCreateBody } from '#shared/schemas/bodies/goal-create.ts';

/*
 * The import row and its check, in their own module: the goal-imports worker imports it on its first message,
 * and it builds the goal create body only (no response schema). shared/schemas/imports.ts re-exports it.
 */

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
    parent_refs: z
      .array(z.string().trim().min(1))
      .max(GOAL_LIMITS.parents, `at most ${GOAL_LIMITS.parents} parents`)
      .optional()
      .meta({ description: 'refs of earlier rows of the same import' }),
    parents: z
      .array(uuid)
      .max(GOAL_LIMITS.parents, `at most ${GOAL_LIMITS.parents} parents`)
      .optional()
      .meta({ description: 'existing goal uuids' }),
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
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((k) => ({ field: k, message: `unknown field ${k}` }))
        : [{ field: issue.path.map(String).join('.') || 'row', message: issue.message }],
    ),
  };
}
