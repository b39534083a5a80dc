import * as z from 'zod';
import type { EventType } from '#shared/domain/webhooks/entity.ts';
import { CheckinRecordSchema } from '#shared/schemas/checkins.ts';
import { GoalRecordSchema } from '#shared/schemas/goals.ts';
import { AccessRequestRecordSchema } from '#shared/schemas/sharing.ts';

/**
 * The outbound event payloads (contract section 12), one schema per type: the webhook body and the
 * EventBridge detail. Listed under `webhooks` in the OpenAPI document.
 */
const previous = z.record(z.string(), z.unknown()).meta({ description: "The changed fields' old values (presented names), on updates" });

const eventSchema = (type: EventType, record: z.ZodType, withPrevious: boolean, description: string) =>
  z
    .object({
      type: z.literal(type),
      timestamp: z.string().meta({ description: 'When the change was committed (ISO 8601)' }),
      data: z.object({ tenant_uuid: z.string(), record, ...(withPrevious ? { previous } : {}) }),
    })
    .meta({ id: `Event_${type.replace('.', '_')}`, description });

export const EVENT_SCHEMAS: Record<EventType, { schema: z.ZodType; summary: string }> = {
  'goal.created': {
    schema: eventSchema('goal.created', GoalRecordSchema, false, 'A goal of any kind was created; record.type is its kind'),
    summary: 'A goal was created',
  },
  'goal.updated': {
    schema: eventSchema(
      'goal.updated',
      GoalRecordSchema,
      true,
      'Fields of a goal other than its progress changed (title, dates, owners, parents, archive...); previous holds their old values',
    ),
    summary: 'A goal was updated',
  },
  'goal.deleted': {
    schema: eventSchema('goal.deleted', GoalRecordSchema, false, 'A goal was deleted (soft delete: discarded_at is set)'),
    summary: 'A goal was deleted',
  },
  'goal.progress_changed': {
    schema: eventSchema(
      'goal.progress_changed',
      GoalRecordSchema,
      true,
      'current_progress, current_value or current_status changed, by a check-in or by rollup from a child; previous holds the old values',
    ),
    summary: "A goal's progress changed",
  },
  'checkin.created': {
    schema: eventSchema('checkin.created', CheckinRecordSchema, false, 'A check-in was created'),
    summary: 'A check-in was created',
  },
  'checkin.updated': {
    schema: eventSchema(
      'checkin.updated',
      CheckinRecordSchema,
      true,
      "A check-in was updated; previous holds the changed fields' old values",
    ),
    summary: 'A check-in was updated',
  },
  'checkin.deleted': {
    schema: eventSchema('checkin.deleted', CheckinRecordSchema, false, 'A check-in was deleted; record is the check-in as it was'),
    summary: 'A check-in was deleted',
  },
  'access_request.created': {
    schema: eventSchema('access_request.created', AccessRequestRecordSchema, false, 'Someone asked for access to a shareable resource'),
    summary: 'An access request was created',
  },
};
