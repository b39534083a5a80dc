import * as z from 'zod';
import { checkinFields as fields } from '#shared/schemas/bodies/checkin-fields.ts';
import { isoDate } from '#shared/schemas/bodies/fields.ts';

export const DataSourcePushBody = z
  .strictObject({
    value: z.number().meta({ description: 'The number: becomes a check-in of the source goal, by its creator.' }),
    checkin_date: isoDate.optional().meta({ description: 'YYYY-MM-DD, default today (UTC).' }),
    note: fields.note.optional(),
  })
  .meta({ id: 'DataSourcePushBody' });
