import { AsyncLocalStorage } from 'node:async_hooks';

/** DynamoDB round trips and consumed capacity of the current request (logged per request, read by benchmarks). */
export interface DbMetrics {
  roundTrips: number;
  readCapacity: number;
  writeCapacity: number;
  itemsRead: number;
}

const storage = new AsyncLocalStorage<DbMetrics>();

export const newDbMetrics = (): DbMetrics => ({ roundTrips: 0, readCapacity: 0, writeCapacity: 0, itemsRead: 0 });

export function withDbMetrics<T>(metrics: DbMetrics, fn: () => Promise<T>): Promise<T> {
  return storage.run(metrics, fn);
}

export function currentDbMetrics(): DbMetrics | undefined {
  return storage.getStore();
}

interface Capacity {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

/** Records one DynamoDB call's output into the current request's metrics. */
export function recordDbCall(output: { ConsumedCapacity?: Capacity | Capacity[]; Count?: number; ScannedCount?: number; Item?: unknown; Responses?: unknown }): void {
  const m = storage.getStore();
  if (!m) return;
  m.roundTrips += 1;
  const caps = output.ConsumedCapacity === undefined ? [] : Array.isArray(output.ConsumedCapacity) ? output.ConsumedCapacity : [output.ConsumedCapacity];
  for (const c of caps) {
    // DynamoDB Local reports CapacityUnits only; split by the call's nature is done by the caller's counters.
    m.readCapacity += c.ReadCapacityUnits ?? 0;
    m.writeCapacity += c.WriteCapacityUnits ?? 0;
    if (c.ReadCapacityUnits === undefined && c.WriteCapacityUnits === undefined && c.CapacityUnits) {
      // attribute the total to reads or writes by the response shape
      if (output.Count !== undefined || output.Item !== undefined || output.Responses !== undefined) m.readCapacity += c.CapacityUnits;
      else m.writeCapacity += c.CapacityUnits;
    }
  }
  if (typeof output.ScannedCount === 'number') m.itemsRead += output.ScannedCount;
  else if (output.Item) m.itemsRead += 1;
  else if (output.Responses && typeof output.Responses === 'object' && !Array.isArray(output.Responses)) {
    for (const items of Object.values(output.Responses as Record<string, unknown[]>)) m.itemsRead += items.length;
  }
}
