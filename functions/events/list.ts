import { encodeCursor } from '#shared/domain/events/position.ts';
import { checkFeedReader, parseFeedQuery, readFeed } from '#shared/domain/events/feed.ts';
import { apiHandler } from '#shared/http/api.ts';
import { json } from '#shared/http/json.ts';

export const handler = apiHandler({
  handle: async ({ ctx, query }) => {
    checkFeedReader(ctx.caller);
    const q = parseFeedQuery(query);
    const { events, next } = await readFeed(ctx, q);
    return json(200, {
      data: {
        type: 'event',
        records: events,
        pagy: { per_page: q.perPage, next_cursor: next ? encodeCursor(ctx.tenantId, next) : null },
        checks: {},
        filters: q.types ? { types: [...q.types] } : {},
      },
    });
  },
});
