/**
 * `npm run bench` — data-access cost of the main endpoints on a tenant of BENCH_GOALS goals (default 10,000).
 * Starts a throwaway local stack (DynamoDB Local in memory), seeds it over HTTP, then reports per request the
 * DynamoDB round trips, consumed read/write capacity and items read (from the local stack's x-db-* headers),
 * which do not depend on how fast this machine is. Wall-clock times are printed for orientation only.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack } from './lib/local-stack.ts';

// `--cold`: bundle size and cold init per function instead (scripts/lib/cold-start.ts); no stack needed.
if (process.argv.includes('--cold')) {
  const { runColdBench } = await import('./lib/cold-start.ts');
  const check = process.argv.includes('--check');
  const sample = process.argv.includes('--sample') ? Number(process.argv[process.argv.indexOf('--sample') + 1]) : undefined;
  const { failed } = await runColdBench({ check, sizeOnly: process.argv.includes('--size-only'), sample });
  process.exit(check && failed ? 1 : 0);
}

process.env.TENANT_RATE_LIMIT_RPS = '0';
process.env.LOG_LEVEL = 'SILENT';
const GOALS = Number(process.env.BENCH_GOALS ?? 10_000);
const CONCURRENCY = 24;

const dataDir = mkdtempSync(join(tmpdir(), 'goal-bench-'));
const stack = await startLocalStack({ port: 0, dataDir, inMemory: true, quiet: true });
process.env.DATA_DIR = dataDir;
Object.assign(process.env, { TABLE_NAME: stack.tableName, DYNAMODB_ENDPOINT: stack.dynamoEndpoint });
const { runAdmin } = await import('./lib/admin-commands.ts');

interface Measured {
  status: number;
  body: any;
  roundTrips: number;
  rcu: number;
  wcu: number;
  itemsRead: number;
  ms: number;
}

async function call(token: string, method: string, path: string, body?: unknown): Promise<Measured> {
  const started = performance.now();
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  const h = (n: string) => Number(res.headers.get(n) ?? 0);
  return { status: res.status, body: text ? JSON.parse(text) : undefined, roundTrips: h('x-db-round-trips'), rcu: h('x-db-read-units'), wcu: h('x-db-write-units'), itemsRead: h('x-db-items-read'), ms: performance.now() - started };
}

async function must(token: string, method: string, path: string, body?: unknown) {
  const r = await call(token, method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}

async function pool<T>(n: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < n) {
      const i = next++;
      out[i] = await fn(i);
    }
  }));
  return out;
}

try {
  const t = (await runAdmin(['create-tenant', '--name', 'Bench', '--admin-email', 'bench@example.test'])) as { token: string; user_uuid: string };
  const tok = t.token;
  const seedStart = performance.now();
  const users = await pool(20, async (i) => (await must(tok, 'POST', '/rest/v2/users', { user: { email: `u${i}@example.test` } })).body.data.record.uuid as string);
  const teams = await pool(10, async (i) => (await must(tok, 'POST', '/rest/v2/teams', { name: `Team ${i}`, member_uuids: users.slice(i, i + 3) })).body.data.record.uuid as string);
  const labels = await pool(20, async (i) => (await must(tok, 'POST', '/rest/v2/labels', { name: `label-${i}` })).body.data.record.uuid as string);
  const periods = await pool(4, async (i) => (await must(tok, 'POST', '/rest/v2/time_periods', { name: `Q${i + 1}`, start_date: ['2027-01-01', '2027-04-01', '2027-07-01', '2027-10-01'][i], end_date: ['2027-03-31', '2027-06-30', '2027-09-30', '2027-12-31'][i] })).body.data.record.uuid as string);
  const nObj = Math.max(1, Math.round(GOALS / 10));
  const nKr = Math.max(1, Math.round((GOALS * 3) / 10));
  const nIni = Math.max(0, GOALS - nObj - nKr);
  const goalBody = (i: number, parents: string[]) => ({
    title: `Goal ${i}`,
    time_period_uuid: periods[i % periods.length],
    owner_uuids: [users[i % users.length]],
    team_uuids: [teams[i % teams.length]],
    labels: [`label-${i % labels.length}`],
    parents,
  });
  const objectives = await pool(nObj, async (i) => (await must(tok, 'POST', '/rest/v2/objectives', goalBody(i, []))).body.data.record.uuid as string);
  const keyResults = await pool(nKr, async (i) => (await must(tok, 'POST', '/rest/v2/key_results', { ...goalBody(i, [objectives[i % nObj]!]), metric: { name: 'm', start_value: 0, target_value: 100, unit: '%', metric_type: 'reach' } })).body.data.record.uuid as string);
  await pool(nIni, async (i) => (await must(tok, 'POST', '/rest/v2/initiatives', goalBody(i, [keyResults[i % nKr]!]))).body.data.record.uuid as string);
  await pool(Math.min(200, nKr), async (i) => must(tok, 'POST', '/rest/v2/checkins', { goal_uuid: keyResults[i], value: i % 100 }));
  const seedSeconds = (performance.now() - seedStart) / 1000;


  const scenarios: Array<[string, string, string, unknown?]> = [
    ['get objective by uuid', 'GET', `/rest/v2/objectives/${objectives[0]}`],
    ['list objectives, page 1 (20)', 'GET', '/rest/v2/objectives'],
    ['list initiatives, page 50 (20)', 'GET', '/rest/v2/initiatives?page=50'],
    ['list key results, owner filter', 'GET', `/rest/v2/key_results?q[owners_uuid_eq]=${users[3]}`],
    ['list initiatives, label filter', 'GET', `/rest/v2/initiatives?q[labels_uuid_eq]=${labels[5]}`],
    ['list initiatives, label name filter', 'GET', `/rest/v2/initiatives?q[labels_name_eq]=label-5`],
    ['list initiatives, team filter', 'GET', `/rest/v2/initiatives?q[teams_uuid_eq]=${teams[2]}`],
    ['list key results, time period filter', 'GET', `/rest/v2/key_results?q[time_period_uuid_eq]=${periods[1]}`],
    ['list key results, parent filter', 'GET', `/rest/v2/key_results?q[links_as_child_ancestor_uuid_eq]=${objectives[1]}`],
    ['list initiatives, ancestor filter', 'GET', `/rest/v2/initiatives?q[ancestors_uuid_eq]=${objectives[2]}`],
    ['list key results, count=true', 'GET', '/rest/v2/key_results?count=true&per_page=1'],
    ['create check-in', 'POST', '/rest/v2/checkins', { goal_uuid: keyResults[0], value: 40 }],
    ['list check-ins, page 1 (16 shards merged)', 'GET', '/rest/v2/checkins'],
    ['create objective', 'POST', '/rest/v2/objectives', goalBody(1, [])],
    ['update objective title', 'PUT', `/rest/v2/objectives/${objectives[0]}`, { title: 'Renamed' }],
    ['list users, page 1', 'GET', '/rest/v2/users'],
  ];
  const rows: Array<Record<string, string | number>> = [];
  for (const [name, method, path, body] of scenarios) {
    await call(tok, method, path, body); // warm the handler
    const r = await call(tok, method, path, method === 'POST' && name === 'create objective' ? goalBody(2, []) : body);
    rows.push({ scenario: name, status: r.status, records: Array.isArray(r.body?.data?.records) ? r.body.data.records.length : r.body?.data?.record || r.body?.uuid ? 1 : 0, round_trips: r.roundTrips, read_units: r.rcu, write_units: r.wcu, items_read: r.itemsRead, ms: Math.round(r.ms) });
  }
  console.log(`\nTenant: ${GOALS} goals (${nObj} objectives, ${nKr} key results, ${nIni} initiatives), ${users.length} users, ${teams.length} teams, ${labels.length} labels; seeded in ${seedSeconds.toFixed(0)} s\n`);
  console.table(rows);
  writeFileSync(join(process.cwd(), 'bench-results.json'), JSON.stringify({ goals: GOALS, rows }, null, 2));
  console.log('Written to bench-results.json. items_read counts index entries and items read by DynamoDB; read/write units are DynamoDB Local\'s consumed capacity.');
} finally {
  await stack.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
