import * as z from 'zod';
import { GOAL_STATUSES, PROGRESS_MODES } from '#shared/domain/goals/entity.ts';
import { goalFields as shared, metricFields } from '#shared/schemas/bodies/goal-fields.ts';

export const MetricUpdate = z
  .strictObject(
    Object.fromEntries(Object.entries(metricFields).map(([k, v]) => [k, v.optional()])) as {
      [K in keyof typeof metricFields]: z.ZodOptional<(typeof metricFields)[K]>;
    },
  )
  .meta({
    id: 'GoalMetricUpdate',
    description:
      'Merged onto the current metric (same metric uuid); a goal without a metric gets a new one and then target_value is required. null removes the metric.',
  });

export const GoalUpdateBody = z
  .strictObject({
    title: shared.title.optional(),
    description: shared.description.optional(),
    short_id: z.string().nullable().optional().meta({
      description:
        '2-30 letters, digits, dashes or underscores; stored upper-case; unique in the tenant ignoring case (422 taken). null removes it.',
    }),
    goal_type: shared.goal_type.optional(),
    visibility: shared.visibility.optional(),
    current_status: z.enum(GOAL_STATUSES).optional(),
    start_date: shared.start_date.optional(),
    end_date: shared.end_date.optional(),
    time_period_uuid: shared.time_period_uuid
      .optional()
      .meta({ description: "A change resets start_date/end_date not sent in the same body to the new period's dates." }),
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
