import * as z from 'zod';
import type { ImportMessage } from '#shared/domain/imports/worker.ts';

/** The import queue's message on the wire (the worker's batch handler validates each one). */
export const ImportMessageSchema = z.object({ tenant_uuid: z.string(), import_uuid: z.string() }) satisfies z.ZodType<ImportMessage>;
