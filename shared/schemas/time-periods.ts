import * as z from 'zod';
import { isoDate, listEnvelope, nonBlank, recordEnvelope } from '#shared/schemas/common.ts';

// start_date <= end_date is checked in the service, not here: an update may send one date and the rule
// then compares it with the stored other one, so one place handles both bodies.
export const TimePeriodCreateBody = z
  .strictObject({ name: nonBlank(200), start_date: isoDate, end_date: isoDate })
  .meta({ id: 'TimePeriodCreateBody', description: 'start_date must be on or before end_date (both inclusive).' });

export const TimePeriodUpdateBody = z
  .strictObject({ name: nonBlank(200).optional(), start_date: isoDate.optional(), end_date: isoDate.optional() })
  .meta({ id: 'TimePeriodUpdateBody', description: 'Dates cannot move so that a non-discarded goal of the period falls outside them (422 validation_failed, code goals_out_of_range).' });

export const TimePeriodRecordSchema = z
  .object({
    uuid: z.string(),
    name: z.string(),
    start_date: z.string(),
    end_date: z.string(),
    creator_uuid: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'TimePeriod' });

export const TimePeriodResponse = recordEnvelope('time_period', TimePeriodRecordSchema);
export const TimePeriodListResponse = listEnvelope('time_period', TimePeriodRecordSchema);
