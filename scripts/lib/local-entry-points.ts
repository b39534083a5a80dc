import { join } from 'node:path';
import type { Grant } from '#shared/function-grant.ts';
import { withGrant } from '#shared/grants.ts';
import type { LocalQueues, LocalWorker, WorkerHandler } from '#shared/queue/queue.ts';
import type { Schedule, StreamConsumer, Worker } from '#shared/routes/index.ts';
import { faultInjecting } from './fault-injection.ts';
import { StreamPoller, type StreamHandler } from './stream-poller.ts';

/**
 * The local stack's entry points besides the routes, made from the same rows the CDK stack reads
 * (shared/routes/index.ts: `workers`, `streamConsumers`, `schedules`; docs/architecture.md "Entry points"): each
 * handler runs inside its row's grant (shared/grants.ts), as its Lambda's role would allow it.
 */

type Load = (file: string) => Promise<unknown>;

/** A worker row as the local queue runs it: the deployed event source's settings (test/infra/local-queues.test.ts compares them). */
export function localWorker(w: Worker, load: Load): LocalWorker {
  const grant: Grant = { name: `worker ${w.queue}`, table: w.table, sendsTo: w.sendsTo ?? [] };
  const granted =
    (h: WorkerHandler): WorkerHandler =>
    (event) =>
      withGrant(grant, () => h(event));
  return {
    queue: w.queue,
    maxReceiveCount: w.maxReceiveCount,
    batchSize: w.batchSize,
    timeoutSeconds: w.timeoutSeconds,
    maxConcurrency: w.maxConcurrency,
    batchWindowSeconds: w.batchWindowSeconds,
    handler: () => (load(w.handler) as Promise<WorkerHandler>).then((h) => faultInjecting(w.queue, granted(h))),
  };
}

export function registerWorkers(queues: LocalQueues, workers: Worker[], load: Load): void {
  for (const w of workers) queues.register(localWorker(w, load));
}

/**
 * A stream consumer row as the stream poller runs it, on DynamoDB Local's stream of the table: its batch size,
 * its sort keys filter, its retries, its grant. The checkpoint is `stream-checkpoint.json` for the stream
 * processor, `stream-checkpoint.<name>.json` for any other.
 */
export function streamPoller(
  row: StreamConsumer,
  opts: {
    endpoint: string;
    streamArn: string;
    dataDir: string;
    deadLetterFile: string;
    load: Load;
    log: (m: string, e?: Record<string, unknown>) => void;
  },
): StreamPoller {
  const grant: Grant = { name: row.name, table: row.table, sendsTo: row.sendsTo };
  return new StreamPoller({
    endpoint: opts.endpoint,
    streamArn: opts.streamArn,
    checkpointFile: join(opts.dataDir, row.name === 'StreamProcessor' ? 'stream-checkpoint.json' : `stream-checkpoint.${row.name}.json`),
    deadLetterFile: opts.deadLetterFile,
    batchSize: row.batchSize,
    // as deployed: the first delivery and the mapping's retries (a record failing under AWS's transient faults is not dead-lettered sooner here)
    maxAttempts: row.retryAttempts + 1,
    skip: (r) => !row.sortKeys.includes(r.dynamodb?.Keys?.SK?.S ?? ''),
    handler: () =>
      (opts.load(row.handler) as Promise<StreamHandler>).then(
        (h): StreamHandler =>
          (event) =>
            withGrant(grant, () => h(event)),
      ),
    log: (m, e) => opts.log(m, e),
  });
}

/**
 * Every schedule row on a timer: every `everyMinutes`, or every `process.env[row.localEveryMsEnv]` ms (0: off).
 * Its grant reads the table (locally the grant cannot narrow to the index's partitions, which the deployed role
 * does) and sends to its queues. Returns the stop.
 */
export function startSchedules(schedules: Schedule[], load: Load, log: (m: string, e?: Record<string, unknown>) => void): () => void {
  const timers = schedules.flatMap((row) => {
    const ms = Number(process.env[row.localEveryMsEnv] ?? row.everyMinutes * 60_000);
    if (!Number.isFinite(ms) || ms <= 0) return [];
    const grant: Grant = { name: row.name, table: 'read', sendsTo: row.sendsTo };
    const run = () =>
      (load(row.handler) as Promise<() => Promise<unknown>>)
        .then((h) => withGrant(grant, () => h()))
        .catch((err) => log(`${row.name} failed`, { error: String(err) }));
    const timer = setInterval(() => void run(), ms);
    timer.unref();
    return [timer];
  });
  return () => {
    for (const t of timers) clearInterval(t);
  };
}
