/**
 * `npm run load` — throughput and latency of the local stack (docs/benchmarks.md). Starts a throwaway local
 * stack on 127.0.0.1 (DynamoDB Local in memory), seeds a small tenant over HTTP, then runs each scenario with 1
 * and 16 clients for LOAD_SECONDS (default 30) in all, beside raw DynamoDB Local GetItem and Query (a plain
 * document client) measured in the same run. The time is split into LOAD_ROUNDS (default 5) rounds: each round
 * measures the raw calls and every scenario for its share, one after another, so a scenario's ratio to its raw
 * call is taken within a round (seconds apart) and the row reports the median round's: a machine whose speed
 * drifts (a shared VM's neighbours) moves both sides of a round alike. A slice stops early at LOAD_MAX_REQUESTS
 * (default 200,000) over the rounds. The clients, raw calls included, run in a worker thread
 * (scripts/lib/load-clients.ts); the stack has the main thread. Prints requests/s and p50/p95/p99 per scenario
 * over all rounds, each API scenario's median ratio to the raw call it is compared with (and the lowest and
 * highest round's), and the stack thread's CPU time per request (user + system of the main thread over the
 * row's slices: what a request costs the service, less sensitive to other load on the machine than requests/s).
 *   LOAD_SECONDS=5 npm run load      a quick run
 *   LOAD_ONLY=get npm run load       only the scenarios whose name contains `get` (and the raw calls)
 *   npm run load -- --check          exit 1 when GET goal is under 0.5x raw GetItem at 1 or 16 clients (needs an
 *                                    idle machine: not part of `scripts/dev test`, docs/benchmarks.md)
 * The rate limiter is on, with a limit that admits everything (scripts/lib/bench-budgets.ts BENCH_RATE_LIMIT): its
 * leases are part of what a request costs. Only 2xx answers count as requests.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#shared/db/keys.ts';
import { Worker } from 'node:worker_threads';
import { startLocalStack } from './lib/local-stack.ts';
import type { LoadResult, LoadSetup, Scenario } from './lib/load-clients.ts';
import { must, pool } from './lib/bench-http.ts';
import { BENCH_RATE_LIMIT } from './lib/bench-budgets.ts';

const SECONDS = Number(process.env.LOAD_SECONDS ?? 30);
const ROUNDS = Math.max(1, Math.floor(Number(process.env.LOAD_ROUNDS ?? 5)));
const MAX_REQUESTS = Number(process.env.LOAD_MAX_REQUESTS ?? 200_000);
const CONCURRENCIES = (process.env.LOAD_CLIENTS ?? '1,16').split(',').map(Number);
const ONLY = process.env.LOAD_ONLY;
const CHECK = process.argv.slice(2).includes('--check');
/** LOAD_PROFILE=<dir>: a CPU profile of the stack's thread per API row (its slices only), written there. */
const PROFILE_DIR = process.env.LOAD_PROFILE;
/** The goal of issue 9: GET goal at least half as many requests/s as raw GetItem, at one client and at 16. */
const GET_GOAL = { ratio: 0.5, clients: [1, 16] };

Object.assign(process.env, BENCH_RATE_LIMIT);
process.env.LOG_LEVEL ??= 'WARN';

const dataDir = mkdtempSync(join(tmpdir(), 'goal-load-'));
const stack = await startLocalStack({ port: 0, host: '127.0.0.1', dataDir, inMemory: true, quiet: true });
process.env.DATA_DIR = dataDir;
Object.assign(process.env, { TABLE_NAME: stack.tableName, DYNAMODB_ENDPOINT: stack.dynamoEndpoint });
const { runAdmin } = await import('./lib/admin-commands.ts');

let clientsThread: Worker | undefined;
let floorServer: ReturnType<typeof createServer> | undefined;
let exitCode = 0;
try {
  const t = (await runAdmin(['create-tenant', '--name', 'Load', '--admin-email', 'load@example.test'])) as {
    token: string;
    tenant_uuid?: string;
  };
  const tok = t.token;
  const post = async (path: string, body: unknown) => (await must(stack.url, tok, 'POST', path, body)).body.data.record;
  const period = await post('/rest/v2/time_periods', { name: 'Q1', start_date: '2027-01-01', end_date: '2027-03-31' });
  const objectives = await pool(20, 8, (i) =>
    post('/rest/v2/objectives', { title: `O${i}`, time_period_uuid: period.uuid, labels: [`l${i % 4}`] }),
  );
  const keyResults = await pool(32, 8, (i) =>
    post('/rest/v2/key_results', {
      title: `K${i}`,
      time_period_uuid: period.uuid,
      parents: [objectives[i % 20].uuid],
      metric: { name: 'm', start_value: 0, target_value: 100, unit: '%', metric_type: 'reach' },
    }),
  );
  const tenantId = objectives[0].uuid && (await must(stack.url, tok, 'GET', '/rest/v2/users?per_page=1')).body.data.records[0]?.tenant_uuid;
  const goalId = objectives[0].uuid as string;
  const raw = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      endpoint: stack.dynamoEndpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
  const tenant = (t.tenant_uuid ?? tenantId) as string;
  const goalKey = keys.entity(tenant, 'goal', goalId);
  if (!(await raw.send(new GetCommand({ TableName: stack.tableName, Key: goalKey }))).Item)
    throw new Error(`raw GetItem finds no goal at ${JSON.stringify(goalKey)}`);
  const listPartition = keys.entityList(tenant, 'objective');

  // The floor: what any service answering over HTTP with one GetItem costs on this machine, in the stack's thread
  // (no auth, middleware or limiter). GET goal cannot beat it; its ratio to raw GetItem bounds GET goal's.
  const floor = createServer((_req, res) => {
    raw.send(new GetCommand({ TableName: stack.tableName, Key: goalKey })).then(
      (o) => {
        const body = JSON.stringify({ data: { record: o.Item } });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
        res.end(body);
      },
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => floor.listen(0, '127.0.0.1', resolve));
  floorServer = floor;
  clientsThread = new Worker(new URL('./lib/load-clients.ts', import.meta.url), {
    workerData: {
      url: stack.url,
      floorUrl: `http://127.0.0.1:${(floor.address() as { port: number }).port}`,
      token: tok,
      goalId,
      keyResultIds: keyResults.map((k) => k.uuid),
      dynamoEndpoint: stack.dynamoEndpoint,
      tableName: stack.tableName,
      goalKey,
      listPartition,
      maxRequests: Math.ceil(MAX_REQUESTS / ROUNDS),
    } satisfies LoadSetup,
  });
  const measure = (scenario: Scenario, clients: number) =>
    new Promise<LoadResult & { stackCpuMicros: number }>((resolve, reject) => {
      const cpuBefore = process.threadCpuUsage();
      clientsThread!.once('message', (m: { result?: LoadResult; error?: string }) => {
        if (!m.result) return reject(new Error(m.error));
        const cpu = process.threadCpuUsage(cpuBefore);
        resolve({ ...m.result, stackCpuMicros: cpu.user + cpu.system });
      });
      clientsThread!.postMessage({ scenario, clients, seconds: SECONDS / ROUNDS });
    });
  // In a round, each API scenario follows the raw call it is compared with as closely as the order allows.
  const RAW_GET = 'raw DynamoDB Local GetItem';
  const RAW_QUERY = 'raw DynamoDB Local Query (21 keys)';
  const FLOOR = 'floor: bare HTTP server + GetItem';
  const chosen = (
    [
      [FLOOR, RAW_GET],
      ['GET goal', RAW_GET],
      ['list page (20)', RAW_QUERY],
      ['filtered list (label)', RAW_QUERY],
      ['check-in', RAW_QUERY],
    ] as Array<[Scenario, Scenario]>
  ).filter(([name]) => !ONLY || name === FLOOR || name.toLowerCase().includes(ONLY.toLowerCase()));
  const comparedWith = (base: Scenario) => chosen.filter(([, against]) => against === base).map(([name]) => name);
  const order: Scenario[] = [RAW_GET, ...comparedWith(RAW_GET), RAW_QUERY, ...comparedWith(RAW_QUERY)];
  const againstOf = new Map<Scenario, Scenario>(chosen);

  interface Row {
    requests: number;
    errors: number;
    elapsed: number;
    cpu: number;
    clientCpu: number;
    latencies: number[];
    ratios: number[];
    /** GET goal's requests/s over the floor's, per round. */
    floorRatios: number[];
  }
  const profiler = new Session();
  if (PROFILE_DIR) {
    profiler.connect();
    await profiler.post('Profiler.enable');
  }
  const lines: string[] = [];
  const getRatios = new Map<number, { raw: number; floor: number; floorToRaw: number }>();
  const quantile = (sorted: number[], q: number) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  // the raw rows' stack CPU is the stack's background work (change stream, queues) while idle, for comparison
  const fmt = (name: Scenario, clients: number, r: Row) => {
    r.latencies.sort((a, b) => a - b);
    const ratio = r.ratios.length
      ? `${median(r.ratios).toFixed(2)} (${Math.min(...r.ratios).toFixed(2)}-${Math.max(...r.ratios).toFixed(2)})`
      : '';
    const toFloor = r.floorRatios.length ? median(r.floorRatios).toFixed(2) : '';
    return `| ${name} | ${clients} | ${r.requests} | ${r.errors} | ${(r.requests / r.elapsed).toFixed(0)} | ${quantile(r.latencies, 0.5).toFixed(1)} | ${quantile(r.latencies, 0.95).toFixed(1)} | ${quantile(r.latencies, 0.99).toFixed(1)} | ${ratio} | ${toFloor} | ${(r.cpu / Math.max(1, r.requests)).toFixed(0)} | ${(r.clientCpu / Math.max(1, r.requests)).toFixed(0)} |`;
  };
  for (const clients of CONCURRENCIES) {
    const rows = new Map<Scenario, Row>(
      order.map((s) => [s, { requests: 0, errors: 0, elapsed: 0, cpu: 0, clientCpu: 0, latencies: [], ratios: [], floorRatios: [] }]),
    );
    for (let round = 0; round < ROUNDS; round++) {
      const perSecond = new Map<Scenario, number>();
      for (const name of order) {
        const profiling = PROFILE_DIR && !name.startsWith('raw ');
        if (profiling) await profiler.post('Profiler.start');
        const r = await measure(name, clients);
        if (profiling) {
          const { profile } = await profiler.post('Profiler.stop');
          const file = join(PROFILE_DIR, `${name.replace(/\W+/g, '-')}-${clients}-${round}.cpuprofile`);
          writeFileSync(file, JSON.stringify(profile));
        }
        const row = rows.get(name)!;
        row.requests += r.requests;
        row.errors += r.errors;
        row.elapsed += r.elapsed;
        row.cpu += r.stackCpuMicros;
        row.clientCpu += r.clientCpuMicros;
        for (const l of r.latencies) row.latencies.push(l);
        perSecond.set(name, r.perSecond);
        const against = againstOf.get(name);
        if (against) row.ratios.push(r.perSecond / perSecond.get(against)!);
        if (name === 'GET goal') row.floorRatios.push(r.perSecond / perSecond.get(FLOOR)!);
        // a check-in's change records are worked off before the next slice, so they do not slow it down
        if (name === 'check-in') await stack.streamIdle();
      }
    }
    for (const name of order) {
      const row = rows.get(name)!;
      if (name === 'GET goal')
        getRatios.set(clients, { raw: median(row.ratios), floor: median(row.floorRatios), floorToRaw: median(rows.get(FLOOR)!.ratios) });
      lines.push(fmt(name, clients, row));
      console.log(lines.at(-1));
    }
  }
  console.log(
    `\n${SECONDS} s per row in ${ROUNDS} rounds, up to ${MAX_REQUESTS} requests; ratio = the median round's requests/s over the raw GetItem (GET goal) or raw Query (the others) of the same round, with the lowest and highest round's; stack CPU = the stack thread's CPU time over the row / requests.\n`,
  );
  console.log(
    '| scenario | clients | requests | errors | per second | p50 ms | p95 ms | p99 ms | ratio to raw (rounds) | ratio to floor | stack CPU µs/req | client CPU µs/req |\n|---|---|---|---|---|---|---|---|---|---|---|---|',
  );
  console.log(lines.join('\n'));
  if (CHECK) {
    const short = GET_GOAL.clients.filter((c) => !((getRatios.get(c)?.raw ?? 0) >= GET_GOAL.ratio));
    for (const c of short) {
      const r = getRatios.get(c);
      console.log(
        r
          ? `GET goal at ${c} client(s): ${r.raw.toFixed(2)}x raw GetItem, goal ${GET_GOAL.ratio}x (${r.floor.toFixed(2)}x the floor, which made ${r.floorToRaw.toFixed(2)}x raw GetItem${r.floorToRaw < GET_GOAL.ratio ? ': on this machine not even a bare HTTP server meets the goal' : ''})`
          : `GET goal at ${c} client(s): not measured, goal ${GET_GOAL.ratio}x raw GetItem`,
      );
    }
    console.log(short.length ? 'GET goal under its goal.' : `GET goal >= ${GET_GOAL.ratio}x raw GetItem at 1 and 16 clients.`);
    if (short.length) exitCode = 1;
  }
} finally {
  await clientsThread?.terminate();
  floorServer?.closeAllConnections();
  floorServer?.close();
  await stack.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(exitCode);
