import * as z from 'zod';
import { REQUEST_SOURCES } from '#shared/domain/integrations/entity.ts';
import type { SupportIssueMessage } from '#shared/domain/integrations/support.ts';

/** The support-issue queue's message on the wire (the worker's batch handler validates each one). */
export const SupportIssueMessageSchema = z.object({
  version: z.literal(1),
  idempotency_key: z.string().min(1),
  tenant: z.object({ uuid: z.string().min(1), name: z.string().nullable() }),
  requester: z.object({ uuid: z.string().min(1), display_name: z.string(), email: z.string() }),
  connector_request: z.object({
    uuid: z.string(),
    connection_type: z.string(),
    normalized_key: z.string(),
    connector_display_name: z.string(),
    request_source: z.enum(REQUEST_SOURCES).nullable(),
    request_count: z.number().int(),
  }),
  requested_at: z.string(),
}) satisfies z.ZodType<SupportIssueMessage>;
