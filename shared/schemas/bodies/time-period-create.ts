import * as z from 'zod';
import { isoDate, nonBlank } from '#shared/schemas/bodies/fields.ts';

// start_date <= end_date is checked in the service, not here: an update may send one date and the rule
// then compares it with the stored other one, so one place handles both bodies.
export const TimePeriodCreateBody = z
  .strictObject({ name: nonBlank(200), start_date: isoDate, end_date: isoDate })
  .meta({ id: 'TimePeriodCreateBody', description: 'start_date must be on or before end_date (both inclusive).' });
