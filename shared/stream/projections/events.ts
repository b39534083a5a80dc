import { mayMakeEvents, type IdentifiedEvent } from '#shared/domain/webhooks/events.ts';
import { buildEvents } from '#shared/events/build.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import type { Projection } from '#shared/stream/projection.ts';

/**
 * Outbound events (contract sections 12, 18): each committed goal, check-in and access-request change becomes its
 * events. Reads: the events built from the change (shared/events/build.ts: the records presented as the API
 * returns them, read through a loader). Projects: those events as the change's `outbound` write, which the
 * committer records in the tenant's event feed (GET /events) first, then publishes to the EventBridge bus
 * (deployed) and fans out to the tenant's webhook endpoints as queued deliveries, as the feed holds them. Event
 * ids and delivery ids are derived from the change, so a replayed record publishes the same events and finds
 * its deliveries: at least once, never a second delivery of one event.
 */
export const outboundEventsProjection: Projection<IdentifiedEvent[]> = {
  name: 'events',
  accepts: mayMakeEvents,
  reads: (change, data) => buildEvents(change, new Loader(data)),
  project(change, events) {
    if (events.length === 0) return {};
    return {
      outbound: { change, events },
      log: {
        message: 'events',
        fields: { change: change.eventId, events: events.map((e) => `${e.event.type} ${e.id}`) },
        count: 'deliveries_queued',
      },
    };
  },
};
