import * as z from 'zod';
import { isoDate, nonBlank } from '#shared/schemas/bodies/fields.ts';

// start_date <= end_date is checked in the service (see time-period-create.ts).
export const TimePeriodUpdateBody = z
  .strictObject({ name: nonBlank(200).optional(), start_date: isoDate.optional(), end_date: isoDate.optional() })
  .meta({
    id: 'TimePeriodUpdateBody',
    description:
      'Dates cannot move so that a non-discarded goal of the period falls outside them (422 validation_failed, code goals_out_of_range).',
  });
