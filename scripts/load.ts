/**
 * `npm run load` — throughput and latency of the local stack (docs/benchmarks.md). Starts a throwaway local
 * stack on 127.0.0.1 (DynamoDB Local in memory), seeds a small tenant over HTTP, then runs each scenario with 1
 * and 16 clients for LOAD_SECONDS (default 30) or LOAD_MAX_REQUESTS (default 200,000), whichever ends first,
 * beside raw DynamoDB Local GetItem and Query (a plain document client) measured in the same run. The clients,
 * raw calls included, run in a worker thread (scripts/lib/load-clients.ts); the stack has the main thread.
 * Prints requests/s and p50/p95/p99 per scenario, each API scenario's ratio to the raw call it is compared with,
 * and the stack thread's CPU time per request (user + system of the main thread over the row: what a request
 * costs the service, less sensitive to other load on the machine than requests/s).
 *   LOAD_SECONDS=5 npm run load      a quick run
 *   LOAD_ONLY=get npm run load       only the scenarios whose name contains `get` (and the raw calls)
 *   npm run load -- --check          exit 1 when GET goal is under 0.5x raw GetItem at 1 or 16 clients (needs an
 *                                    idle machine: not part of `scripts/dev test`, docs/benchmarks.md)
 * The rate limiter is on, with a limit that admits everything (scripts/lib/bench-budgets.ts BENCH_RATE_LIMIT): its
 * leases are part of what a request costs. Only 2xx answers count as requests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
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
const MAX_REQUESTS = Number(process.env.LOAD_MAX_REQUESTS ?? 200_000);
const CONCURRENCIES = (process.env.LOAD_CLIENTS ?? '1,16').split(',').map(Number);
const ONLY = process.env.LOAD_ONLY;
const CHECK = process.argv.slice(2).includes('--check');
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

  clientsThread = new Worker(new URL('./lib/load-clients.ts', import.meta.url), {
    workerData: {
      url: stack.url,
      token: tok,
      goalId,
      keyResultIds: keyResults.map((k) => k.uuid),
      dynamoEndpoint: stack.dynamoEndpoint,
      tableName: stack.tableName,
      goalKey,
      listPartition,
      seconds: SECONDS,
      maxRequests: MAX_REQUESTS,
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
      clientsThread!.postMessage({ scenario, clients });
    });
  const scenarios: Array<[Scenario, 'get' | 'query']> = [
    ['GET goal', 'get'],
    ['list page (20)', 'query'],
    ['filtered list (label)', 'query'],
    ['check-in', 'query'],
  ];

  const lines: string[] = [];
  const getRatios = new Map<number, number>();
  // the raw rows' stack CPU is the stack's background work (change stream, queues) while idle, for comparison
  const fmt = (r: LoadResult & { stackCpuMicros: number }, ratio?: number) =>
    `| ${r.name} | ${r.clients} | ${r.requests} | ${r.errors} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.p99.toFixed(1)} | ${ratio === undefined ? '' : ratio.toFixed(2)} | ${(r.stackCpuMicros / r.requests).toFixed(0)} |`;
  for (const clients of CONCURRENCIES) {
    const rawGetR = await measure('raw DynamoDB Local GetItem', clients);
    const rawQueryR = await measure('raw DynamoDB Local Query (21 keys)', clients);
    lines.push(fmt(rawGetR), fmt(rawQueryR));
    console.log(lines.at(-2));
    console.log(lines.at(-1));
    for (const [name, against] of scenarios) {
      if (ONLY && !name.toLowerCase().includes(ONLY.toLowerCase())) continue;
      const r = await measure(name, clients);
      const ratio = r.perSecond / (against === 'get' ? rawGetR : rawQueryR).perSecond;
      if (name === 'GET goal') getRatios.set(clients, ratio);
      lines.push(fmt(r, ratio));
      console.log(lines.at(-1));
    }
  }
  console.log(
    `\n${SECONDS} s per row, up to ${MAX_REQUESTS} requests; ratio = requests/s over the raw GetItem (GET goal) or raw Query (the others) of the same row group; stack CPU = the stack thread's CPU time over the row / requests.\n`,
  );
  console.log(
    '| scenario | clients | requests | errors | per second | p50 ms | p95 ms | p99 ms | ratio to raw | stack CPU µs/req |\n|---|---|---|---|---|---|---|---|---|---|',
  );
  console.log(lines.join('\n'));
  if (CHECK) {
    const short = GET_GOAL.clients.map((c) => [c, getRatios.get(c)] as const).filter(([, r]) => r === undefined || r < GET_GOAL.ratio);
    for (const [c, r] of short)
      console.log(
        `GET goal at ${c} client(s): ${r === undefined ? 'not measured' : `${r.toFixed(2)}x`} raw GetItem, goal ${GET_GOAL.ratio}x`,
      );
    console.log(short.length ? 'GET goal under its goal.' : `GET goal >= ${GET_GOAL.ratio}x raw GetItem at 1 and 16 clients.`);
    if (short.length) exitCode = 1;
  }
} finally {
  await clientsThread?.terminate();
  await stack.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(exitCode);
