import * as z from 'zod';
import { checkinFields as fields } from '#shared/schemas/bodies/checkin-fields.ts';

export const CheckinUpdateBody = z
  .strictObject({
    value: fields.value.optional(),
    status: fields.status.optional(),
    note: fields.note.optional(),
    score: fields.score
      .optional()
      .meta({ description: 'Only when the (new or current) status is closed; a status other than closed clears the score.' }),
    labels: fields.labels.optional().meta({ description: 'Replaces the labels (names).' }),
  })
  .meta({ id: 'CheckinUpdateBody' });
