import * as z from 'zod';
import { PACES } from '#shared/domain/goals/pace.ts';
import { GOAL_KINDS, GOAL_STATUSES, GOAL_TYPES, METRIC_TYPES, PROGRESS_MODES, VISIBILITIES, type GoalKind } from '#shared/domain/goals/entity.ts';
import { LABEL_NAME_MAX } from '#shared/domain/labels/entity.ts';
import { accessSource, checks, isoDate, listEnvelope, nonBlank, uuid } from '#shared/schemas/common.ts';
import type { GoalCreateCommand, GoalDeleteCommand, GoalUpdateCommand } from '#shared/domain/goals/commands.ts';

/**
 * Goal request and response schemas, shared by the three kinds (spec: "one record shape and one set of
 * write parameters"). Bodies are strict: an unknown field, `uuid`, `creator_uuid` or `tenant_uuid` is a 400
 * naming it. Rules that need stored data (dates inside the period, short_id, references, metric, cycles)
 * are checked by the service and answer 422.
 */

export { GOAL_LIMITS, GOAL_WRITE_ITEMS } from '#shared/domain/goals/rules.ts';
import { GOAL_LIMITS } from '#shared/domain/goals/rules.ts';

const uuids = (max: number, what: string) => z.array(uuid).max(max, `at most ${max} ${what}`).meta({ description: `At most ${max} (so one goal write fits one atomic transaction).` });

const metricFields = {
  name: z.string().trim().max(200).nullable(),
  start_value: z.number(),
  target_value: z.number(),
  unit: z.string().trim().max(50).nullable(),
  metric_type: z.enum(METRIC_TYPES),
};

/**
 * target_value is required, but its absence breaks a rule of metrics (422 validation_failed, code required,
 * as on update) rather than the body's shape: so it is optional to the parser, required in the document.
 */
export const MetricCreate = z
  .strictObject({
    name: metricFields.name.optional(),
    start_value: metricFields.start_value.optional().meta({ description: 'Default 0.' }),
    target_value: metricFields.target_value.optional(),
    unit: metricFields.unit.optional(),
    metric_type: metricFields.metric_type.optional().meta({ description: 'Default reach.' }),
  })
  .superRefine((m, ctx) => {
    if (m.target_value === undefined) ctx.addIssue({ code: 'custom', path: ['target_value'], message: 'A metric needs target_value', params: { code: 'required' } });
  })
  .transform((m) => ({ ...m, target_value: m.target_value! }))
  .meta({
    id: 'GoalMetric',
    required: ['target_value'],
    description:
      'The goal\'s current metric. target_value is required (422 validation_failed, code required). reach needs start_value != target_value; stay_between needs start_value <= target_value (422 validation_failed, field metric.target_value).',
  });

export const MetricUpdate = z
  .strictObject(Object.fromEntries(Object.entries(metricFields).map(([k, v]) => [k, v.optional()])) as { [K in keyof typeof metricFields]: z.ZodOptional<(typeof metricFields)[K]> })
  .meta({
    id: 'GoalMetricUpdate',
    description: 'Merged onto the current metric (same metric uuid); a goal without a metric gets a new one and then target_value is required. null removes the metric.',
  });

const visibleEntity = z.strictObject({
  entity_type: z.enum(['user', 'team']),
  entity_uuid: uuid,
  mode: z.enum(['view', 'edit']).optional().meta({ description: 'Default view.' }),
});

const shared = {
  title: nonBlank(500),
  description: z.string().max(20_000).nullable(),
  time_period_uuid: uuid,
  start_date: isoDate,
  end_date: isoDate,
  goal_type: z.enum(GOAL_TYPES),
  visibility: z.enum(VISIBILITIES),
  team_uuids: uuids(GOAL_LIMITS.teams, 'teams').nullable(),
  owner_uuids: uuids(GOAL_LIMITS.owners, 'owners').nullable(),
  labels: z
    .array(nonBlank(LABEL_NAME_MAX))
    .max(GOAL_LIMITS.labels, `at most ${GOAL_LIMITS.labels} labels`)
    .nullable()
    .meta({ description: `Label names, at most ${GOAL_LIMITS.labels}; unknown names become new regular labels, atomically with the goal.` }),
  delegate_uuids: uuids(GOAL_LIMITS.delegates, 'delegates').nullable(),
  delegate_uuid: uuid.nullable().meta({ description: 'Earlier variant of delegate_uuids: one delegate (null for none). Send one of the two.' }),
  checkin_due_days: z.number().int().min(0).max(366).nullable().meta({ description: 'Days between expected check-ins (earlier variant); null for the default.' }),
  parents: z
    .array(z.union([uuid, z.strictObject({ parent_uuid: uuid, contribution_percent: z.number().min(0).max(100).optional() })]))
    .max(GOAL_LIMITS.parents, `at most ${GOAL_LIMITS.parents} parents`)
    .nullable()
    .meta({
      description:
        `At most ${GOAL_LIMITS.parents}. Parent goal uuids (any kind) → parent_links with contribution_percent 100. Extension: an element may be {parent_uuid, contribution_percent} to weight this goal in the parent\'s rollup (a kept link keeps its weight unless one is given). Not the goal itself nor one of its descendants; a goal the caller cannot see is refused as unknown (422 not_found).`,
    }),
  visible_entities: z
    .array(visibleEntity)
    .max(GOAL_LIMITS.visibleEntities)
    .nullable()
    .meta({
      description: `Users and teams that may see a limited goal (mode edit also lets them change it); at most ${GOAL_LIMITS.visibleEntities}. A team deleted after it was named stays listed and grants nothing; on update, entities already on the goal are not checked again.`,
    }),
};

export const GoalCreateBody = z
  .strictObject({
    title: shared.title,
    description: shared.description.optional(),
    time_period_uuid: shared.time_period_uuid,
    start_date: shared.start_date.optional().meta({ description: 'Default: the time period start. Within the period, on or before end_date.' }),
    end_date: shared.end_date.optional().meta({ description: 'Default: the time period end. Within the period, on or after start_date.' }),
    goal_type: shared.goal_type.optional(),
    visibility: shared.visibility.optional(),
    team_uuids: shared.team_uuids.optional(),
    owner_uuids: shared.owner_uuids.optional(),
    labels: shared.labels.optional(),
    delegate_uuids: shared.delegate_uuids.optional(),
    delegate_uuid: shared.delegate_uuid.optional(),
    checkin_due_days: shared.checkin_due_days.optional(),
    metric: MetricCreate.nullable().optional(), // null or absent: no metric
    parents: shared.parents.optional(),
    visible_entities: shared.visible_entities.optional(),
  })
  .meta({ id: 'GoalCreateBody' });

export const GoalUpdateBody = z
  .strictObject({
    title: shared.title.optional(),
    description: shared.description.optional(),
    short_id: z.string().nullable().optional().meta({ description: '2-30 letters, digits, dashes or underscores; stored upper-case; unique in the tenant ignoring case (422 taken). null removes it.' }),
    goal_type: shared.goal_type.optional(),
    visibility: shared.visibility.optional(),
    current_status: z.enum(GOAL_STATUSES).optional(),
    start_date: shared.start_date.optional(),
    end_date: shared.end_date.optional(),
    time_period_uuid: shared.time_period_uuid.optional().meta({ description: 'A change resets start_date/end_date not sent in the same body to the new period\'s dates.' }),
    team_uuids: shared.team_uuids.optional(),
    owner_uuids: shared.owner_uuids.optional(),
    labels: shared.labels.optional(),
    delegate_uuids: shared.delegate_uuids.optional(),
    delegate_uuid: shared.delegate_uuid.optional(),
    checkin_due_days: shared.checkin_due_days.optional(),
    progress_mode: z.enum(PROGRESS_MODES).optional(),
    metric: MetricUpdate.nullable().optional(),
    parents: shared.parents.optional(),
    visible_entities: shared.visible_entities.optional(),
  })
  .meta({ id: 'GoalUpdateBody', description: 'Every field optional; an omitted field is left unchanged (null or [] clears a list).' });

export const GoalDeleteBody = z
  .strictObject({
    including_immediate_objectives: z.boolean().optional(),
    including_immediate_initiatives: z.boolean().optional(),
    including_immediate_key_results: z.boolean().optional(),
    delete_hierarchy: z.boolean().optional(),
  })
  .meta({
    id: 'GoalDeleteBody',
    description:
      'Soft delete (discarded_at/discarded_by_uuid). including_immediate_<kind> also discards the direct children of that kind; delete_hierarchy every descendant. All-or-nothing: refused with 422 too_many (field delete_hierarchy or the including_immediate_* flag sent) when it needs more than 100 writes, 403 when the caller cannot change one of them (a goal the caller cannot see is not named).',
  });

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
    expected_progress: z.number().meta({ description: 'Where progress should be by today (UTC): 0-100, linear from start_date (0) to end_date (100); 0 before the start, 100 after the end.' }),
    pace: z.enum(PACES).nullable().meta({ description: 'null while current_progress is null; ahead when current_progress >= expected_progress + 10, behind when <= expected_progress - 10, else on_pace.' }),
    current_value: nullableNumber,
    current_status: z.enum(GOAL_STATUSES),
    status: z.enum(GOAL_STATUSES).meta({ description: 'Earlier-variant name of current_status (always equal).' }),
    source_uuid: nullableString,
    source_type: nullableString,
    path: nullableString.meta({ description: 'uuids from the root of the first-parent line down to this goal, joined with "/".' }),
    searchable_content: nullableString.meta({ description: 'Lower-cased title, description and short_id joined by spaces (what q[searchable_content_cont] searches).' }),
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
    short_id_uuid: nullableString.meta({ description: 'Identifies the current short_id assignment (new on every change of short_id); null without short_id.' }),
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
    labels: z.array(z.object({ uuid: z.string(), name: z.string() })).meta({ description: 'The goal\'s labels (written as names).' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Goal' });

export const goalResponse = (kind: GoalKind) => z.object({ data: z.object({ type: z.literal(kind), record: GoalRecordSchema, checks, access_source: accessSource }) });
export const goalListResponse = (kind: GoalKind) => listEnvelope(kind, GoalRecordSchema);

/** The wire bodies map onto the domain's commands (shared/domain/goals/commands.ts): a drift fails the build here. */
export const toGoalCreateCommand = (body: z.infer<typeof GoalCreateBody>): GoalCreateCommand => body;
export const toGoalUpdateCommand = (body: z.infer<typeof GoalUpdateBody>): GoalUpdateCommand => body;
export const toGoalDeleteCommand = (body: z.infer<typeof GoalDeleteBody>): GoalDeleteCommand => body;
