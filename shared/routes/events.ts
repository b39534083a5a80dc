import type { Route } from '#shared/routes/types.ts';
import { EventFeedQuery, EventFeedResponse } from '#shared/schemas/event-feed.ts';

/** The event feed (contract section 18): written by the change stream's events projection (shared/stream/projections/events.ts). */
export const eventRoutes: Route[] = [
  {
    method: 'GET',
    path: '/events',
    handler: 'functions/events/list.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'events:read',
    table: 'read',
    doc: {
      summary:
        "The tenant's events of the last 30 days, oldest first, the same ones webhooks receive (admins). Resume with cursor (pagy.next_cursor) or after=<event id>; types= filters",
      tag: 'webhooks',
      extension: true,
      query: EventFeedQuery,
      success: { status: 200, schema: EventFeedResponse },
    },
  },
];
