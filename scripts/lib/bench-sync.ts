import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { baseDb } from '#shared/db/client.ts';
import { newDbMetrics, withDbMetrics } from '#shared/db/metrics.ts';
import { DATA_SOURCE_SYNC_QUEUE, runUuid, type SyncMessage } from '#shared/domain/integrations/entity.ts';
import { sweepDue } from '#shared/domain/integrations/sync-sweep.ts';
import { withGrant } from '#shared/grants.ts';
import { sqsRecord, type WorkerHandler } from '#shared/queue/queue.ts';
import { workers } from '#shared/routes/index.ts';
import { BUDGETS, rowOf, type Budget, type Row } from './bench-budgets.ts';
import { call, must, type Measured } from './bench-http.ts';
import type { BenchCallers, SeedRefs } from './bench-scenarios.ts';
import { startJsonSource } from './json-source.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');

/**
 * What one data-source sync costs (issue 23): a scheduled run of an http_json source whose value changed (a
 * check-in through the check-in command), one whose value did not, and a push. The scheduled run is the real
 * path end to end but for the queue's transport: the schedule's sweep (`sweepDue`, the deployed sweep's code)
 * names the run, and the sync worker's own handler (the module the local stack's queue runs, under its row's
 * grant) takes it as an SQS event, fetching from a JSON server on 127.0.0.1 in this process. Its DynamoDB calls
 * are counted as a request's are (shared/db/metrics.ts), with no rate limiter (a worker has none). Each run is
 * checked in the sync log: a run that did not end as the row says fails the row. The push is a request to
 * `POST /data_sources/{id}/values`, measured like the other rows (limiter included).
 */
export async function syncRows(url: string, callers: BenchCallers, refs: SeedRefs, settled: () => Promise<void>): Promise<Row[]> {
  let value = 1;
  const server = await startJsonSource(() => ({ status: 200, body: { data: { total: value } } }));
  try {
    // A key result of its own, with no check-in: the full seed's key results hold check-ins dated in their 2027
    // periods, later than a run's (today's), so the goal's current value would never become the synced one and
    // every run would differ from it (contract 16: a check-in each time), leaving no "unchanged" run to measure.
    const goal = (
      await must(url, callers.admin, 'POST', '/rest/v2/key_results', {
        title: 'bench data source',
        time_period_uuid: refs.periods[0],
        metric: { name: 'm', start_value: 0, target_value: 200_000, unit: '#', metric_type: 'reach' },
      })
    ).body.data.record.uuid as string;
    // a day's period: the local stack's own sweep (every minute) never finds it due during the bench
    const http = (
      await must(url, callers.admin, 'POST', '/data_sources', {
        goal_uuid: goal,
        name: 'bench http_json',
        kind: 'http_json',
        config: { url: server.url, json_pointer: '/data/total', every_minutes: 1440 },
      })
    ).body.data.record;
    const push = (
      await must(url, callers.admin, 'POST', '/data_sources', { goal_uuid: refs.keyResults[2], name: 'bench push', kind: 'push' })
    ).body.data.record;

    const row = workerRow();
    const handler = (await import(pathToFileURL(join(ROOT, row.handler)).href).then((m) => m.handler)) as WorkerHandler;
    const grant = { name: `worker ${row.queue}`, table: row.table, sendsTo: row.sendsTo ?? [] };
    /** The source's next scheduled run, as the sweep puts it on the queue (a sweep far in the future finds it due). */
    const due = async (): Promise<SyncMessage> => {
      const sent: SyncMessage[] = [];
      await sweepDue(baseDb(), { send: async (_q, body) => (sent.push(body as SyncMessage), 'bench') }, '9999-12-31T00:00:00.000Z');
      const msg = sent.find((m) => m.data_source_uuid === http.uuid);
      if (!msg) throw new Error('the sweep found no due run of the bench source');
      return msg;
    };
    /** One scheduled run, measured; its sync log entry must say `want`. */
    const run = async (want: string): Promise<{ measured: Measured; extra: string[] }> => {
      await settled(); // the previous run's check-in through the stream: a run measures a sync, not a race with it
      const msg = await due();
      const metrics = newDbMetrics();
      const started = performance.now();
      const event = { Records: [sqsRecord({ queue: DATA_SOURCE_SYNC_QUEUE, messageId: `bench-${msg.run}`, body: msg })] };
      const out = await withDbMetrics(metrics, () => withGrant(grant, () => handler(event)));
      const ms = performance.now() - started;
      const failed = (out?.batchItemFailures ?? []).length > 0;
      const logged = (await must(url, callers.admin, 'GET', `/data_sources/${http.uuid}/syncs?per_page=1`)).body.data.records[0];
      const extra: string[] = [];
      if (logged?.uuid !== runUuid(http.uuid, msg.run, 'sync')) extra.push('the run is not in the sync log');
      else if (logged.status !== want) extra.push(`sync ${logged.status} (${logged.error ?? ''}), not ${want}`);
      const measured: Measured = {
        status: failed ? 500 : 200,
        body: { data: { record: logged } },
        roundTrips: metrics.roundTrips,
        calls: metrics.calls,
        writes: metrics.writes,
        rcu: metrics.readCapacity,
        wcu: metrics.writeCapacity,
        itemsRead: metrics.itemsRead,
        limiter: { roundTrips: 0, calls: 0, writes: 0, rcu: 0, wcu: 0 },
        missing: [],
        ms,
      };
      return { measured, extra };
    };
    const worst = async (name: string, want: string, values: number[], budget: Budget) => {
      const tries = [];
      for (const v of values) {
        value = v;
        tries.push(await run(want));
      }
      return rowOf(
        name,
        tries.map((t) => t.measured),
        budget,
        tries.flatMap((t) => t.extra),
      );
    };

    const rows: Row[] = [];
    value = 100_000; // a value the seed never wrote: the warm-up run (the worker's first load) writes it
    await run('succeeded');
    rows.push(await worst('data-source sync, value changed (a check-in)', 'succeeded', [100_001, 100_002], BUDGETS.syncChanged));
    rows.push(await worst('data-source sync, value unchanged', 'unchanged', [100_002, 100_002], BUDGETS.syncUnchanged));

    // the push, as the other POST rows: a warm-up, a try as it left the limiter, a try after the limiter's reset
    const pushOnce = () => call(url, push.push_secret, 'POST', `/data_sources/${push.uuid}/values`, { value: value++ });
    await settled();
    await pushOnce();
    await settled();
    const steady = await pushOnce();
    await settled();
    callers.resetLimiter();
    const fresh = await pushOnce();
    const extra = fresh.status < 300 && fresh.limiter.roundTrips === 0 ? ['no limiter call after its reset'] : [];
    rows.push(rowOf('data-source push (POST /data_sources/{id}/values)', [steady, fresh], BUDGETS.push, extra));
    return rows;
  } finally {
    await server.stop();
  }
}

function workerRow() {
  const row = workers.find((w) => w.queue === DATA_SOURCE_SYNC_QUEUE);
  if (!row) throw new Error(`no worker row for ${DATA_SOURCE_SYNC_QUEUE}`);
  return row;
}
