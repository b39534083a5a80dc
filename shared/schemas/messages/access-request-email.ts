import * as z from 'zod';
import type { AccessRequestEmailMessage } from '#shared/domain/sharing/mail.ts';
import { NOTIFICATION_KINDS } from '#shared/domain/sharing/entity.ts';
import { LEVELS, SHAREABLE_PATHS, type ShareablePath } from '#shared/domain/sharing/types.ts';

/** The access-request e-mail queue's message on the wire (the worker's batch handler validates each one). */
export const AccessRequestEmailMessageSchema = z.object({
  version: z.literal(1),
  tenant_uuid: z.string().min(1),
  event: z.enum(NOTIFICATION_KINDS),
  access_request_uuid: z.string(),
  shareable: z.object({ type: z.enum(SHAREABLE_PATHS as [ShareablePath, ...ShareablePath[]]), uuid: z.string(), title: z.string() }),
  requester: z.object({ uuid: z.string(), display_name: z.string(), email: z.string() }),
  requested_level: z.enum(LEVELS),
  message: z.string().nullable(),
  deliveries: z.array(z.object({ recipient_uuid: z.string(), notification_uuid: z.string() })),
}) satisfies z.ZodType<AccessRequestEmailMessage>;
