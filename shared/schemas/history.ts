import * as z from 'zod';
import { GOAL_STATUSES } from '#shared/domain/goals/entity.ts';
import { HISTORY_CAUSES } from '#shared/domain/history/progress-cause.ts';
import { listEnvelope } from '#shared/schemas/common.ts';

export const HistoryRecordSchema = z
  .object({
    at: z.string().meta({ description: 'When the change was committed (ISO 8601).' }),
    value: z.number().nullable(),
    progress: z.number().nullable().meta({ description: 'current_progress after the change, 0-100.' }),
    status: z.enum(GOAL_STATUSES),
    cause: z.enum(HISTORY_CAUSES).meta({
      description:
        'checkin (created), checkin_updated, checkin_deleted, rollup (children moved a rollup goal), metric_changed (the metric or the progress mode changed).',
    }),
  })
  .meta({ id: 'HistoryRecord', description: "One change of a goal's value, progress or status." });

export const HistoryListResponse = listEnvelope('history', HistoryRecordSchema);
