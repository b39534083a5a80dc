import * as z from 'zod';
import { CHECKIN_SOURCES } from '#shared/domain/checkins/entity.ts';
import { GOAL_STATUSES } from '#shared/domain/goals/entity.ts';
import { listEnvelope, recordEnvelope } from '#shared/schemas/common.ts';

/** The check-in bodies are built in shared/schemas/bodies/checkin-*.ts (a handler loads its own on first use); re-exported for the route table. */
export { CheckinCreateBody } from '#shared/schemas/bodies/checkin-create.ts';
export { CheckinUpdateBody } from '#shared/schemas/bodies/checkin-update.ts';

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
    source: z.enum(CHECKIN_SOURCES).meta({
      description:
        'Where the check-in came from: api (default), mcp (an AI assistant through /mcp), import, data_source (a data source sync or push).',
    }),
    data_source_uuid: z.string().nullable().meta({ description: 'The data source that wrote it (source data_source), else null.' }),
    mentioned_entities: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]),
    labels: z.array(z.object({ uuid: z.string(), name: z.string() })),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Checkin' });

export const CheckinResponse = recordEnvelope('checkin', CheckinRecordSchema);
export const CheckinListResponse = listEnvelope('checkin', CheckinRecordSchema);
