import * as z from 'zod';
import { listEnvelope, recordEnvelope } from '#shared/schemas/common.ts';

/** The time period bodies are built in shared/schemas/bodies/time-period-*.ts (a handler loads its own on first use); re-exported for the route table. */
export { TimePeriodCreateBody } from '#shared/schemas/bodies/time-period-create.ts';
export { TimePeriodUpdateBody } from '#shared/schemas/bodies/time-period-update.ts';

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
