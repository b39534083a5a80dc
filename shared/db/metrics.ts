import { contextValue, withContextValue } from '#shared/request-context.ts';

/** DynamoDB round trips and consumed capacity of the current request (logged per request, read by benchmarks). */
export interface DbMetrics {
  /** Round trips in sequence: calls in flight together count once (the longest chain of dependent calls). */
  roundTrips: number;
  /** Every DynamoDB call, concurrent ones each counted. */
  calls: number;
  /** Calls that write (PutItem, UpdateItem, DeleteItem, TransactWriteItems, BatchWriteItem). */
  writes: number;
  readCapacity: number;
  writeCapacity: number;
  itemsRead: number;
}

/** Per-request bookkeeping for `roundTrips`: the deepest chain among calls already finished. */
const finishedDepth = new WeakMap<DbMetrics, number>();

export const newDbMetrics = (): DbMetrics => ({ roundTrips: 0, calls: 0, writes: 0, readCapacity: 0, writeCapacity: 0, itemsRead: 0 });

export function withDbMetrics<T>(metrics: DbMetrics, fn: () => Promise<T>): Promise<T> {
  return withContextValue('dbMetrics', metrics, fn);
}

export function currentDbMetrics(): DbMetrics | undefined {
  return contextValue('dbMetrics');
}

/** The rate limiter's share of each request's calls, kept beside the request's own (a WeakMap: no change to its log shape). */
const limiterOf = new WeakMap<DbMetrics, DbMetrics>();

/**
 * The metrics the rate limiter's calls go to: its own set, so the request's counts keep meaning the data access
 * its route does (and what the e2e tests assert of it), yet tied to the request, so the local stack reports it
 * beside them (`x-db-limiter-*`, docs/benchmarks.md). Outside a request (the import worker), a throwaway set.
 */
export function limiterDbMetrics(): DbMetrics {
  const request = currentDbMetrics();
  if (!request) return newDbMetrics();
  let m = limiterOf.get(request);
  if (!m) limiterOf.set(request, (m = newDbMetrics()));
  return m;
}

/** The limiter's calls of the current request (undefined outside a request). */
export function currentLimiterDbMetrics(): DbMetrics | undefined {
  const request = currentDbMetrics();
  return request ? (limiterOf.get(request) ?? newDbMetrics()) : undefined;
}

interface Capacity {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

/**
 * Marks the start of one DynamoDB call; the returned function records its end. A call is taken to depend on
 * every call of the request that finished before it started, so its depth is one more than theirs; calls
 * started while others are in flight share a depth, and `roundTrips` is the deepest chain.
 */
export function startDbCall(commandName?: string): (output: DbCallOutput) => void {
  const m = contextValue('dbMetrics');
  if (!m) return () => {};
  const depth = (finishedDepth.get(m) ?? 0) + 1;
  m.calls += 1;
  if (commandName && WRITE_COMMANDS.has(commandName)) m.writes += 1;
  m.roundTrips = Math.max(m.roundTrips, depth);
  return (output) => {
    finishedDepth.set(m, Math.max(finishedDepth.get(m) ?? 0, depth));
    recordDbCall(output, m);
  };
}

const WRITE_COMMANDS = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'TransactWriteItemsCommand',
  'BatchWriteItemCommand',
]);

type DbCallOutput = {
  ConsumedCapacity?: Capacity | Capacity[];
  Count?: number;
  ScannedCount?: number;
  Item?: unknown;
  Responses?: unknown;
};

/** Records one DynamoDB call's consumed capacity and items read into the request's metrics. */
function recordDbCall(output: DbCallOutput, m: DbMetrics): void {
  const caps =
    output.ConsumedCapacity === undefined
      ? []
      : Array.isArray(output.ConsumedCapacity)
        ? output.ConsumedCapacity
        : [output.ConsumedCapacity];
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
