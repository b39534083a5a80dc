import * as z from 'zod';
import { checkinFields as fields } from '#shared/schemas/bodies/checkin-fields.ts';
import { isoDate, uuid } from '#shared/schemas/bodies/fields.ts';

export const CheckinCreateBody = z
  .strictObject({
    goal_uuid: uuid.meta({
      description:
        "The goal (any kind) checked in on; the caller must be able to edit it (403 otherwise). A goal that is not in the caller's tenant, or that the caller cannot see, is 422 validation_failed (field goal_uuid, code not_found); a deleted or archived goal is 422 too.",
    }),
    value: fields.value.optional(),
    status: fields.status.optional().meta({ description: 'Default not_started.' }),
    note: fields.note.optional(),
    score: fields.score.optional(),
    checkin_date: isoDate.optional().meta({
      description: 'YYYY-MM-DD, default today (UTC). The goal follows the check-in with the latest checkin_date, then the latest created.',
    }),
    labels: fields.labels.optional(),
  })
  .meta({ id: 'CheckinCreateBody' });
