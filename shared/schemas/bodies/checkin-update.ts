import * as z from 'zod';
import type { CheckinUpdateInput } from '#shared/domain/checkins/service.ts';
import { checkinFields as fields } from '#shared/schemas/bodies/checkin-fields.ts';

export const CheckinUpdateBody = z
  .strictObject({
    value: fields.value.optional(),
    status: fields.status.optional(),
    note: fields.note.optional(),
    score: fields.score.optional().meta({ description: 'Only when the (new or current) status is closed; a status other than closed clears the score.' }),
    labels: fields.labels.optional().meta({ description: 'Replaces the labels (names).' }),
  })
  .meta({ id: 'CheckinUpdateBody' });

/** The wire body maps onto the domain's check-in command (shared/domain/checkins/decide.ts): a drift fails the build here. */
export const toCheckinUpdateCommand = (body: z.infer<typeof CheckinUpdateBody>): CheckinUpdateInput => body;
