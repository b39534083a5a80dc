import * as z from 'zod';
import { checkFeedReader, parseFeedQuery, readFeed } from '#shared/domain/events/feed.ts';
import { encodeCursor } from '#shared/domain/events/position.ts';
import { EVENT_TYPES } from '#shared/domain/webhooks/entity.ts';
import { EventFeedResponse } from '#shared/schemas/event-feed.ts';
import { EVENTS_READ, listData, tool, type McpTool } from '#shared/mcp/tool.ts';
import { cursor, pagePairs, perPage } from '#shared/mcp/tool-args.ts';

/** list_events: the change feed (the webhook events), for "what changed since ...?". */

export const LIST_EVENTS: McpTool = tool({
  name: 'list_events',
  title: 'What changed',
  description:
    'The organisation\'s change events (goals, check-ins, users, teams, ... created, updated or deleted), oldest first, the same ones webhooks receive. Use it to answer "what changed since ...?": pass after = the id of the last event already seen, or cursor = pagy.next_cursor of the previous answer, and optionally types (e.g. ["checkin.created"]). Administrators only.',
  scope: EVENTS_READ,
  readOnly: true,
  args: z.strictObject({
    after: z.string().optional().meta({ description: 'An event id: the events recorded after it (the last one already read).' }),
    cursor,
    types: z
      .array(z.enum(EVENT_TYPES))
      .min(1)
      .optional()
      .meta({ description: 'Only these event types, e.g. ["checkin.created", "goal.updated"].' }),
    per_page: perPage,
  }),
  result: listData(EventFeedResponse),
  run: async (ctx, a) => {
    checkFeedReader(ctx.caller);
    const q = parseFeedQuery([
      ...(a.after ? [['after', a.after] as [string, string]] : []),
      ...(a.types ? [['types', a.types.join(',')] as [string, string]] : []),
      ...pagePairs(a),
    ]);
    const { events, next } = await readFeed(ctx, q);
    return {
      type: 'event' as const,
      // the feed's events are the webhook bodies (FeedEventSchema); the result schema's zod type widens them
      records: events as unknown as Array<Record<string, unknown>>,
      pagy: { per_page: q.perPage, next_cursor: next ? encodeCursor(ctx.tenantId, next) : null },
      checks: {},
      filters: q.types ? { types: [...q.types] } : {},
    };
  },
  summary: (r) =>
    `${r.records.length} event(s)${r.records.length ? `: ${r.records.map((e) => `${e.type} ${e.id}`).join(', ')}` : ''}${r.pagy.next_cursor ? ' (more: pass cursor)' : ''}`,
});
