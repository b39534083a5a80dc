import * as z from 'zod';
import { REFRESH_STATES, SKILL_STATUSES } from '#shared/domain/documents/entity.ts';
import { LEVELS } from '#shared/domain/sharing/types.ts';
import { listEnvelope } from '#shared/schemas/common.ts';

export const DocumentSummarySchema = z
  .object({
    uuid: z.string(),
    type: z.literal('document'),
    shareable_type: z.literal('documents'),
    title: z.string(),
    owner_uuid: z.string(),
    access_level: z.enum(LEVELS).meta({ description: "The caller's level: manage for the owner and admins, else its grant's" }),
    grants_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({
    id: 'DocumentSummary',
    description: 'A document without content and grants (GET /documents/{shareable_uuid} returns them), so a page of 100 stays small',
  });

export const DocumentListResponse = listEnvelope('document', DocumentSummarySchema);

export const RefreshStartBody = z
  .strictObject({})
  .meta({ id: 'DocumentRefreshBody', description: 'No fields: the document is named by the path.' });

export const RefreshStartResponse = z
  .object({
    thread_uuid: z.string().meta({ description: 'Poll GET /chat/refresh_threads/{thread_uuid}/status with it' }),
    state: z.literal('running'),
    already_running: z
      .boolean()
      .meta({ description: 'true when a refresh of this document was already running: its thread is returned and no second run starts' }),
  })
  .meta({ id: 'DocumentRefreshStart' });

export const RefreshStatusResponse = z
  .object({
    thread_uuid: z.string(),
    state: z.enum(REFRESH_STATES).meta({
      description:
        'running until the run ends; completed_unknown_outcome: the agent gave no recognized status code (show summary, do not assume success)',
    }),
    skill_status: z
      .enum(SKILL_STATUSES)
      .nullable()
      .meta({ description: "The agent's terminal status code when its output ended with a recognized one; null otherwise" }),
    summary: z.string().nullable().meta({ description: 'One line; null while running' }),
    started_at: z.string(),
    completed_at: z.string().nullable().meta({ description: 'Set when the run ends' }),
  })
  .meta({ id: 'DocumentRefreshStatus' });
