import * as z from 'zod';
import type { DocumentRefreshMessage } from '#shared/domain/documents/worker.ts';

/** The document refresh queue's message on the wire (the worker's batch handler validates each one). */
export const DocumentRefreshMessageSchema = z.object({
  version: z.literal(1),
  tenant_uuid: z.string().min(1),
  thread_uuid: z.string().min(1),
}) satisfies z.ZodType<DocumentRefreshMessage>;
