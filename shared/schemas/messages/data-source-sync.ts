import * as z from 'zod';
import type { SyncMessage } from '#shared/domain/integrations/entity.ts';

/** The data-source sync queue's message on the wire (the worker's batch handler validates each one). */
export const SyncMessageSchema = z.object({
  version: z.literal(1),
  tenant_uuid: z.string(),
  data_source_uuid: z.string(),
  run: z.string().min(1).max(200),
  trigger: z.enum(['schedule', 'manual']),
}) satisfies z.ZodType<SyncMessage>;
