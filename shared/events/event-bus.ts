import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';

/**
 * The stack's EventBridge bus (EVENT_BUS_NAME; unset locally: no bus). Every outbound event goes there as
 * well as to webhooks, source `goal-tracking`, detail-type the event type, detail the event itself.
 */
export const EVENT_SOURCE = 'goal-tracking';

export interface BusEvent {
  type: string;
  timestamp: string;
  data: { tenant_uuid: string };
}

export interface EventBus {
  publish(events: BusEvent[]): Promise<void>;
}

/** PutEvents takes 10 entries per call; any failed entry fails the call, so the stream record is retried. */
export function eventBridgeBus(busName: string, client: Pick<EventBridgeClient, 'send'> = new EventBridgeClient({})): EventBus {
  return {
    async publish(events) {
      for (let i = 0; i < events.length; i += 10) {
        const batch = events.slice(i, i + 10);
        const out = await client.send(
          new PutEventsCommand({
            Entries: batch.map((e) => ({
              EventBusName: busName,
              Source: EVENT_SOURCE,
              DetailType: e.type,
              Detail: JSON.stringify(e),
              Time: new Date(e.timestamp),
              Resources: [],
            })),
          }),
        );
        if (out.FailedEntryCount) {
          const first = out.Entries?.find((x) => x.ErrorCode);
          throw new Error(
            `EventBridge refused ${out.FailedEntryCount} of ${batch.length} events: ${first?.ErrorCode ?? ''} ${first?.ErrorMessage ?? ''}`.trim(),
          );
        }
      }
    },
  };
}

let bus: EventBus | null | undefined;

/** The bus for this process, or null where there is none (the local stack). */
export function configuredEventBus(): EventBus | null {
  if (bus === undefined) bus = process.env.EVENT_BUS_NAME ? eventBridgeBus(process.env.EVENT_BUS_NAME) : null;
  return bus;
}
