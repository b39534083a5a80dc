import * as z from 'zod';
import type { DeliveryMessage } from '#shared/domain/webhooks/entity.ts';

/** The webhook delivery queue's message on the wire (the worker's batch handler validates each one). */
export const DeliveryMessageSchema = z.object({
  version: z.literal(1),
  tenant_uuid: z.string(),
  webhook_uuid: z.string(),
  delivery_uuid: z.string(),
  seq: z.number().int().nonnegative(),
  not_before: z.number(),
  awaits_write_until: z.number().optional(),
}) satisfies z.ZodType<DeliveryMessage>;
