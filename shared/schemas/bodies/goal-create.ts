import * as z from 'zod';
import { goalFields as shared, metricFields } from '#shared/schemas/bodies/goal-fields.ts';

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
    if (m.target_value === undefined)
      ctx.addIssue({ code: 'custom', path: ['target_value'], message: 'A metric needs target_value', params: { code: 'required' } });
  })
  .transform((m) => ({ ...m, target_value: m.target_value! }))
  .meta({
    id: 'GoalMetric',
    required: ['target_value'],
    description:
      "The goal's current metric. target_value is required (422 validation_failed, code required). reach needs start_value != target_value; stay_between needs start_value <= target_value (422 validation_failed, field metric.target_value).",
  });

export const GoalCreateBody = z
  .strictObject({
    title: shared.title,
    description: shared.description.optional(),
    time_period_uuid: shared.time_period_uuid,
    start_date: shared.start_date
      .optional()
      .meta({ description: 'Default: the time period start. Within the period, on or before end_date.' }),
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
