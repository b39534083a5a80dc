import * as z from 'zod';
import { EVENT_TYPES } from '#shared/domain/webhooks/entity.ts';
import { checks } from '#shared/schemas/common.ts';
import { EVENT_SCHEMAS } from '#shared/schemas/events.ts';

/** GET /events (contract section 18): the outbound events of section 12, each with its id, in the list shape. */
const id = z.string().meta({ description: 'The event id: the webhook-id header of its deliveries' });
const [first, ...others] = EVENT_TYPES.map((t) => (EVENT_SCHEMAS[t].schema as z.ZodObject).extend({ id }));

export const FeedEventSchema = z
  .union([first!, ...others])
  .meta({ id: 'FeedEvent', description: 'An outbound event as webhooks receive it (one of the event schemas), with its id' });

export const EventFeedQuery = z.object({
  per_page: z.string().optional().meta({ description: 'Events per page (default 20, clamped to 100)' }),
  limit: z.string().optional().meta({ description: 'Alias for per_page' }),
  cursor: z.string().optional().meta({ description: 'pagy.next_cursor of the previous page: the page after it' }),
  after: z.string().optional().meta({ description: 'An event id: the events recorded after that event (the last one a client read)' }),
  types: z
    .string()
    .optional()
    .meta({ description: `Comma-separated event types to return (${EVENT_TYPES.join(', ')})` }),
});

export const EventFeedResponse = z.object({
  data: z.object({
    type: z.literal('event'),
    records: z.array(FeedEventSchema),
    pagy: z.object({
      per_page: z.number(),
      next_cursor: z
        .string()
        .nullable()
        .meta({ description: 'Where the next page starts (pass as cursor); null when every event recorded so far is read' }),
    }),
    checks,
    filters: z.object({ types: z.array(z.string()).optional() }),
  }),
});
