import * as z from 'zod';
import { PACES } from '#shared/domain/goals/pace.ts';
import {
  GOAL_KINDS,
  GOAL_STATUSES,
  GOAL_TYPES,
  METRIC_TYPES,
  PROGRESS_MODES,
  VISIBILITIES,
  type GoalKind,
} from '#shared/domain/goals/entity.ts';
import { accessSource, checks, listEnvelope } from '#shared/schemas/common.ts';

/**
 * Goal schemas, shared by the three kinds. The request bodies are built in their own modules
 * (shared/schemas/bodies/goal-*.ts), which a handler loads on the first request with a body; this module
 * re-exports them for the route table (OpenAPI) and builds the response schemas, which no handler loads.
 */

export { GoalCreateBody } from '#shared/schemas/bodies/goal-create.ts';
export { GoalUpdateBody } from '#shared/schemas/bodies/goal-update.ts';
export { GoalDeleteBody } from '#shared/schemas/bodies/goal-delete.ts';

/** Archive/unarchive take no body. */
export const GoalNoBody = z.strictObject({});

const nullableString = z.string().nullable();
const nullableNumber = z.number().nullable();

export const GoalRecordSchema = z
  .object({
    uuid: z.string(),
    type: z.enum(GOAL_KINDS),
    title: z.string(),
    description: nullableString,
    start_date: z.string(),
    end_date: z.string(),
    goal_type: z.enum(GOAL_TYPES),
    time_period_uuid: z.string(),
    current_metric_uuid: nullableString,
    creator_uuid: z.string(),
    last_checkin_date: nullableString,
    score: nullableNumber,
    current_progress: nullableNumber,
    expected_progress: z.number().meta({
      description:
        'Where progress should be by today (UTC): 0-100, linear from start_date (0) to end_date (100); 0 before the start, 100 after the end.',
    }),
    pace: z.enum(PACES).nullable().meta({
      description:
        'null while current_progress is null; ahead when current_progress >= expected_progress + 10, behind when <= expected_progress - 10, else on_pace.',
    }),
    current_value: nullableNumber,
    current_status: z.enum(GOAL_STATUSES),
    status: z.enum(GOAL_STATUSES).meta({ description: 'Earlier-variant name of current_status (always equal).' }),
    source_uuid: nullableString,
    source_type: nullableString,
    path: nullableString.meta({ description: 'uuids from the root of the first-parent line down to this goal, joined with "/".' }),
    searchable_content: nullableString.meta({
      description: 'Lower-cased title, description and short_id joined by spaces (what q[searchable_content_cont] searches).',
    }),
    progress_mode: z.enum(PROGRESS_MODES),
    value_updated_at: nullableString,
    status_updated_at: nullableString,
    value_updated_by_uuid: nullableString,
    status_updated_by_uuid: nullableString,
    visibility: z.enum(VISIBILITIES),
    ai_rollup_enabled: z.boolean(),
    data_sources_count: z.number(),
    discarded_at: nullableString,
    discarded_by_uuid: nullableString,
    short_id_uuid: nullableString.meta({
      description: 'Identifies the current short_id assignment (new on every change of short_id); null without short_id.',
    }),
    archived_at: nullableString,
    archived_by_uuid: nullableString,
    short_id: nullableString,
    owner_uuids: z.array(z.string()),
    target: nullableNumber,
    unit: nullableString,
    metric_type: z.enum(METRIC_TYPES).nullable(),
    parent_links: z.array(z.object({ parent_uuid: z.string(), contribution_percent: z.number() })),
    visible_entities: z.array(z.object({ entity_type: z.enum(['user', 'team']), entity_uuid: z.string(), mode: z.enum(['view', 'edit']) })),
    checkin_due_days: nullableNumber,
    delegate_uuid: nullableString.meta({ description: 'Earlier variant: the first of delegate_uuids.' }),
    delegate_uuids: z.array(z.string()),
    partner_goals_external_id: nullableString,
    team_uuids: z.array(z.string()),
    labels: z.array(z.object({ uuid: z.string(), name: z.string() })).meta({ description: "The goal's labels (written as names)." }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Goal' });

export const goalResponse = (kind: GoalKind) =>
  z.object({ data: z.object({ type: z.literal(kind), record: GoalRecordSchema, checks, access_source: accessSource }) });
export const goalListResponse = (kind: GoalKind) => listEnvelope(kind, GoalRecordSchema);
