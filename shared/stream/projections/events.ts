import { recordEvents } from '#shared/domain/events/feed.ts';
import { mayMakeEvents } from '#shared/domain/webhooks/events.ts';
import { buildEvents } from '#shared/events/build.ts';
import { fanOut } from '#shared/domain/webhooks/deliveries.ts';
import { configuredEventBus, type EventBus } from '#shared/events/event-bus.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { queueSender, type QueueSender } from '#shared/queue/queue.ts';
import type { Projection } from '#shared/stream/projection.ts';

/**
 * Outbound events (contract sections 12, 18): each committed goal, check-in and access-request change becomes its
 * events, written to the tenant's event feed (GET /events), published to the EventBridge bus (deployed) and fanned out to the tenant's webhook endpoints as
 * queued deliveries. Event ids and delivery ids are derived from the change, so a replayed record publishes
 * the same events and finds its deliveries: at least once, never a second delivery of one event.
 */
export function eventsProjection(deps: { queue?: () => QueueSender; bus?: () => EventBus | null } = {}): Projection {
  return {
    name: 'events',
    accepts: mayMakeEvents,
    async apply(change, ctx) {
      const built = await buildEvents(change, new Loader(ctx.data));
      if (built.length === 0) return;
      // the feed first: what it holds (the first write of each event id) is what the bus and the webhooks get
      const events = await recordEvents(ctx.data, change, built);
      await (deps.bus ?? configuredEventBus)()?.publish(events.map((e) => e.event));
      const queued = await fanOut(ctx.data, events, (deps.queue ?? queueSender)());
      ctx.log.info('events', { change: change.eventId, events: events.map((e) => `${e.event.type} ${e.id}`), deliveries_queued: queued });
    },
  };
}

export const outboundEventsProjection = eventsProjection();
