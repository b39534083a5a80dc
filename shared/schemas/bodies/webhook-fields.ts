import * as z from 'zod';
import { EVENT_TYPES } from '#shared/domain/webhooks/entity.ts';
import { nonBlank } from '#shared/schemas/bodies/fields.ts';

/** The fields the webhook bodies share (webhook-create.ts, webhook-update.ts). */
export const url = z
  .string()
  .trim()
  .min(1, 'must not be blank')
  .max(2048, 'must be at most 2048 characters')
  .meta({ description: 'https URL resolving to a public address (the local stack also accepts http on 127.0.0.1 and localhost)' });
export const events = z
  .array(z.enum([...EVENT_TYPES, '*']))
  .min(1, 'must name at least one event type')
  .max(EVENT_TYPES.length + 1)
  .meta({ description: 'Event types to receive, or ["*"] for every type' });
export const description = nonBlank(500).nullable();
