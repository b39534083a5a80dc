import * as z from 'zod';
import { GOAL_STATUSES } from '#shared/domain/goals/entity.ts';
import { LABEL_NAME_MAX } from '#shared/domain/labels/entity.ts';
import { isoDate, listEnvelope, recordEnvelope, uuid } from '#shared/schemas/common.ts';
import type { CheckinCreateInput, CheckinUpdateInput } from '#shared/domain/checkins/service.ts';

/**
 * Check-in bodies are flat (spec update body; contract section 7 for create). Strict: an unknown field
 * (`uuid`, `creator_uuid`, `progress`, `metric_uuid`, `tenant_uuid`, ...) is a 400 naming it. `score` with
 * a status other than `closed` is a 422 from the service (it depends on the stored status on update).
 */

/** Labels per check-in: a cap that keeps one check-in write inside DynamoDB's 100-item transaction. */
export const CHECKIN_MAX_LABELS = 20;

const fields = {
  value: z.number().nullable().meta({ description: 'The metric value (the goal\'s progress in percent when the goal has no metric). null for a status-only check-in.' }),
  status: z.enum(GOAL_STATUSES),
  note: z.string().max(20_000).nullable(),
  score: z.number().nullable().meta({ description: 'Only with status closed (422 validation_failed otherwise).' }),
  labels: z.array(z.string().max(LABEL_NAME_MAX)).max(CHECKIN_MAX_LABELS).meta({ description: 'Label names; unknown names create regular labels.' }),
};

export const CheckinCreateBody = z
  .strictObject({
    goal_uuid: uuid.meta({
      description:
        'The goal (any kind) checked in on; the caller must be able to edit it (403 otherwise). A goal that is not in the caller\'s tenant, or that the caller cannot see, is 422 validation_failed (field goal_uuid, code not_found); a deleted or archived goal is 422 too.',
    }),
    value: fields.value.optional(),
    status: fields.status.optional().meta({ description: 'Default not_started.' }),
    note: fields.note.optional(),
    score: fields.score.optional(),
    checkin_date: isoDate.optional().meta({ description: 'YYYY-MM-DD, default today (UTC). The goal follows the check-in with the latest checkin_date, then the latest created.' }),
    labels: fields.labels.optional(),
  })
  .meta({ id: 'CheckinCreateBody' });

export const CheckinUpdateBody = z
  .strictObject({
    value: fields.value.optional(),
    status: fields.status.optional(),
    note: fields.note.optional(),
    score: fields.score.optional().meta({ description: 'Only when the (new or current) status is closed; a status other than closed clears the score.' }),
    labels: fields.labels.optional().meta({ description: 'Replaces the labels (names).' }),
  })
  .meta({ id: 'CheckinUpdateBody' });

export const CheckinRecordSchema = z
  .object({
    uuid: z.string(),
    goal_uuid: z.string(),
    metric_uuid: z.string().nullable(),
    value: z.number().nullable(),
    progress: z.number().nullable().meta({ description: 'Progress 0-100 of the goal at this value, when the check-in was written.' }),
    score: z.number().nullable(),
    checkin_date: z.string(),
    status: z.enum(GOAL_STATUSES),
    note: z.string().nullable(),
    creator_uuid: z.string(),
    source_info: z.record(z.string(), z.unknown()),
    mentioned_entities: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]),
    labels: z.array(z.object({ uuid: z.string(), name: z.string() })),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Checkin' });

export const CheckinResponse = recordEnvelope('checkin', CheckinRecordSchema);
export const CheckinListResponse = listEnvelope('checkin', CheckinRecordSchema);

/** The wire bodies map onto the domain's check-in commands (shared/domain/checkins/decide.ts): a drift fails the build here. */
export const toCheckinCreateCommand = (body: z.infer<typeof CheckinCreateBody>): CheckinCreateInput => body;
export const toCheckinUpdateCommand = (body: z.infer<typeof CheckinUpdateBody>): CheckinUpdateInput => body;
