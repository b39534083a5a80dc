/**
 * How the local poller hands one read of a shard to the processor, as Lambda's event source mapping does with a
 * parallelization factor: the records are split into `lanes` by item key (all changes of one item in one lane,
 * in shard order), each lane delivered in batches of `batchSize` one after the other, the lanes concurrently.
 * DynamoDB Local exposes a single shard, so this is where the local stream gets its parallelism.
 *
 * A failed batch is delivered again as the mapping does: from its first failed record (partial batch response),
 * or bisected when the handler threw (the whole batch failed), after a back-off; a record that still fails after
 * `maxAttempts` deliveries goes to the on-failure destination (`deadLetter`) and its lane moves on. Only its own
 * lane waits for a failing record: the other lanes go on, and the shard's next read waits for every lane (the
 * checkpoint moves past a read only once all of it is done).
 */
export interface LaneOptions<R> {
  /** The item a record changes (partition and sort key): its changes keep their order. */
  keyOf(record: R): string;
  /** The record's sequence number (attempts are counted per record). */
  seqOf(record: R): string;
  lanes: number;
  batchSize: number;
  maxAttempts: number;
  /** Delivers one batch: the index of its first failed record (-1: none); a throw fails the whole batch. */
  deliver(batch: R[]): Promise<number>;
  deadLetter(record: R, attempts: number, error?: string): void;
  retrying?(record: R, attempts: number, error?: string): void;
  backoffMs?(attempts: number): number;
  /** False once the poller stops: a lane ends early and the read is not checkpointed (delivered again after a restart). */
  running(): boolean;
}

/** Item keys to lanes: a new key goes to the lane with the fewest records so far (ties to the lowest lane). */
export function splitLanes<R>(records: readonly R[], keyOf: (r: R) => string, lanes: number): R[][] {
  const out: R[][] = Array.from({ length: Math.max(1, lanes) }, () => []);
  const laneOf = new Map<string, R[]>();
  for (const r of records) {
    const key = keyOf(r);
    let lane = laneOf.get(key);
    if (!lane) {
      lane = out.reduce((a, b) => (b.length < a.length ? b : a));
      laneOf.set(key, lane);
    }
    lane.push(r);
  }
  return out.filter((l) => l.length > 0);
}

/** Delivers every record (each done or dead-lettered); false when the poller stopped before the end. */
export async function deliverInLanes<R>(records: readonly R[], o: LaneOptions<R>): Promise<boolean> {
  const attempts = new Map<string, number>();
  const backoff = o.backoffMs ?? ((n: number) => 200 * n);

  /** One batch until every record of it is done or dead-lettered, in order. */
  const settle = async (batch: R[]): Promise<boolean> => {
    let rest = batch;
    while (rest.length) {
      if (!o.running()) return false;
      let failedFrom: number;
      let error: string | undefined;
      let threw = false;
      try {
        failedFrom = await o.deliver(rest);
      } catch (err) {
        error = (err as Error).message;
        failedFrom = 0;
        threw = true;
      }
      if (failedFrom < 0) return true;
      if (threw && rest.length > 1) {
        // bisect on a function error: the halves are delivered apart (in order), so one bad record fails only its half
        const half = Math.ceil(rest.length / 2);
        return (await settle(rest.slice(0, half))) && settle(rest.slice(half));
      }
      rest = rest.slice(failedFrom);
      const record = rest[0]!;
      const n = (attempts.get(o.seqOf(record)) ?? 0) + 1;
      attempts.set(o.seqOf(record), n);
      if (n >= o.maxAttempts) {
        o.deadLetter(record, n, error);
        rest = rest.slice(1);
      } else {
        o.retrying?.(record, n, error);
        await new Promise((r) => setTimeout(r, backoff(n)));
      }
    }
    return true;
  };

  const lane = async (recs: R[]): Promise<boolean> => {
    for (let i = 0; i < recs.length; i += o.batchSize) if (!(await settle(recs.slice(i, i + o.batchSize)))) return false;
    return true;
  };
  const results = await Promise.all(splitLanes(records, o.keyOf, o.lanes).map(lane));
  return results.every(Boolean);
}
