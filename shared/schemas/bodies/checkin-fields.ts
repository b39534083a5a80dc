import * as z from 'zod';
import { GOAL_STATUSES } from '#shared/domain/goals/entity.ts';
import { LABEL_NAME_MAX } from '#shared/domain/labels/entity.ts';

/**
 * Check-in bodies are flat (spec update body; contract section 7 for create). Strict: an unknown field
 * (`uuid`, `creator_uuid`, `progress`, `metric_uuid`, `tenant_uuid`, ...) is a 400 naming it. `score` with
 * a status other than `closed` is a 422 from the service (it depends on the stored status on update).
 */

/** Labels per check-in: a cap that keeps one check-in write inside DynamoDB's 100-item transaction. */
export const CHECKIN_MAX_LABELS = 20;

export const checkinFields = {
  value: z.number().nullable().meta({
    description: "The metric value (the goal's progress in percent when the goal has no metric). null for a status-only check-in.",
  }),
  status: z.enum(GOAL_STATUSES),
  note: z.string().max(20_000).nullable(),
  score: z.number().nullable().meta({ description: 'Only with status closed (422 validation_failed otherwise).' }),
  labels: z
    .array(z.string().max(LABEL_NAME_MAX))
    .max(CHECKIN_MAX_LABELS)
    .meta({ description: 'Label names; unknown names create regular labels.' }),
};
