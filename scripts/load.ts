/**
 * `npm run load` — throughput and latency of the local stack (docs/benchmarks.md). Starts a throwaway local
 * stack on 127.0.0.1 (DynamoDB Local in memory), seeds a small tenant over HTTP, then runs each scenario with 1
 * and 16 clients for LOAD_SECONDS (default 30) or LOAD_MAX_REQUESTS (default 200,000), whichever ends first,
 * beside raw DynamoDB Local GetItem and Query (a plain document client, same process) measured in the same run.
 * Prints requests/s and p50/p95/p99 per scenario, and each API scenario's ratio to the raw call it is compared with.
 *   LOAD_SECONDS=5 npm run load      a quick run
 *   LOAD_ONLY=get npm run load       only the scenarios whose name contains `get` (and the raw calls)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#shared/db/keys.ts';
import { startLocalStack } from './lib/local-stack.ts';
import { must, pool } from './lib/bench-http.ts';

const SECONDS = Number(process.env.LOAD_SECONDS ?? 30);
const MAX_REQUESTS = Number(process.env.LOAD_MAX_REQUESTS ?? 200_000);
const CONCURRENCIES = (process.env.LOAD_CLIENTS ?? '1,16').split(',').map(Number);
const ONLY = process.env.LOAD_ONLY;

process.env.TENANT_RATE_LIMIT_RPS = '0';
process.env.LOG_LEVEL ??= 'WARN';

const dataDir = mkdtempSync(join(tmpdir(), 'goal-load-'));
const stack = await startLocalStack({ port: 0, host: '127.0.0.1', dataDir, inMemory: true, quiet: true });
process.env.DATA_DIR = dataDir;
Object.assign(process.env, { TABLE_NAME: stack.tableName, DYNAMODB_ENDPOINT: stack.dynamoEndpoint });
const { runAdmin } = await import('./lib/admin-commands.ts');

interface Result {
  name: string;
  clients: number;
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p95: number;
  p99: number;
}

const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN);

/** `clients` loops calling `op` until the time or the request count is used up. */
async function measure(name: string, clients: number, op: (client: number, i: number) => Promise<boolean>): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  let issued = 0;
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < deadline && issued < MAX_REQUESTS) {
        const i = issued++;
        const t0 = performance.now();
        const ok = await op(client, i).catch(() => false);
        latencies.push(performance.now() - t0);
        if (!ok) errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { name, clients, requests: latencies.length, errors, perSecond: latencies.length / seconds, p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), p99: quantile(latencies, 0.99) };
}

try {
  const t = (await runAdmin(['create-tenant', '--name', 'Load', '--admin-email', 'load@example.test'])) as { token: string; tenant_uuid?: string };
  const tok = t.token;
  const post = async (path: string, body: unknown) => (await must(stack.url, tok, 'POST', path, body)).body.data.record;
  const period = await post('/rest/v2/time_periods', { name: 'Q1', start_date: '2027-01-01', end_date: '2027-03-31' });
  const objectives = await pool(20, 8, (i) => post('/rest/v2/objectives', { title: `O${i}`, time_period_uuid: period.uuid, labels: [`l${i % 4}`] }));
  const keyResults = await pool(32, 8, (i) => post('/rest/v2/key_results', { title: `K${i}`, time_period_uuid: period.uuid, parents: [objectives[i % 20].uuid], metric: { name: 'm', start_value: 0, target_value: 100, unit: '%', metric_type: 'reach' } }));
  const tenantId = objectives[0].uuid && (await must(stack.url, tok, 'GET', '/rest/v2/users?per_page=1')).body.data.records[0]?.tenant_uuid;
  const goalId = objectives[0].uuid as string;
  const raw = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', endpoint: stack.dynamoEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));
  const tenant = (t.tenant_uuid ?? tenantId) as string;
  const goalKey = keys.entity(tenant, 'goal', goalId);
  if (!(await raw.send(new GetCommand({ TableName: stack.tableName, Key: goalKey }))).Item) throw new Error(`raw GetItem finds no goal at ${JSON.stringify(goalKey)}`);
  const listPartition = keys.entityList(tenant, 'objective');

  const http = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.url}${path}`, { method, headers: { authorization: `Bearer ${tok}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    await res.arrayBuffer();
    return res.status < 300;
  };
  const scenarios: Array<[string, 'get' | 'query', (client: number, i: number) => Promise<boolean>]> = [
    ['GET goal', 'get', () => http('GET', `/rest/v2/objectives/${goalId}`)],
    ['list page (20)', 'query', () => http('GET', '/rest/v2/objectives')],
    ['filtered list (label)', 'query', () => http('GET', '/rest/v2/objectives?q[labels_name_eq]=l1')],
    ['check-in', 'query', (client, i) => http('POST', '/rest/v2/checkins', { goal_uuid: keyResults[client % keyResults.length].uuid, value: i % 100 })],
  ];
  const rawGet = () => raw.send(new GetCommand({ TableName: stack.tableName, Key: goalKey })).then((o) => !!o.Item);
  const rawQuery = () => raw.send(new QueryCommand({ TableName: stack.tableName, IndexName: 'GSI1', KeyConditionExpression: 'GSI1PK = :p', ExpressionAttributeValues: { ':p': listPartition }, Limit: 21 })).then((o) => (o.Count ?? 0) > 0);
  if (!(await rawQuery())) throw new Error(`raw Query finds no entry in ${listPartition}`);

  const lines: string[] = [];
  const fmt = (r: Result, ratio?: number) =>
    `| ${r.name} | ${r.clients} | ${r.requests} | ${r.errors} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.p99.toFixed(1)} | ${ratio === undefined ? '' : ratio.toFixed(2)} |`;
  for (const clients of CONCURRENCIES) {
    for (const [, , op] of scenarios) await op(0, 0); // warm every handler once
    const rawGetR = await measure('raw DynamoDB Local GetItem', clients, rawGet);
    const rawQueryR = await measure('raw DynamoDB Local Query (21 keys)', clients, rawQuery);
    lines.push(fmt(rawGetR), fmt(rawQueryR));
    console.log(lines.at(-2));
    console.log(lines.at(-1));
    for (const [name, against, op] of scenarios) {
      if (ONLY && !name.toLowerCase().includes(ONLY.toLowerCase())) continue;
      const r = await measure(name, clients, op);
      lines.push(fmt(r, r.perSecond / (against === 'get' ? rawGetR : rawQueryR).perSecond));
      console.log(lines.at(-1));
    }
  }
  console.log(`\n${SECONDS} s per row, up to ${MAX_REQUESTS} requests; ratio = requests/s over the raw GetItem (GET goal) or raw Query (the others) of the same row group.\n`);
  console.log('| scenario | clients | requests | errors | per second | p50 ms | p95 ms | p99 ms | ratio to raw |\n|---|---|---|---|---|---|---|---|---|');
  console.log(lines.join('\n'));
} finally {
  await stack.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(0);
