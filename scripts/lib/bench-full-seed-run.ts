/**
 * `npm run bench -- --full`: the bench of bench/RESULTS.md. Seeds the full tenant straight into DynamoDB Local
 * (bench-full-seed.ts: 100,000 goals, 500,000 check-ins, 2,000 users, 200 teams, 100 labels, 4 periods), then
 * starts the local stack on that data (the stream begins after the seed), adds the rollup trees of the check-in
 * scenarios and nine small tenants over the API, runs every scenario (bench-scenarios.ts) against the large
 * tenant, and writes bench/RESULTS.md with the machine, the seed and the run durations.
 *
 * Sizes can be lowered for a trial (`BENCH_FULL_GOALS`, `BENCH_FULL_CHECKINS`, `BENCH_FULL_USERS`,
 * `BENCH_FULL_TEAMS`, `BENCH_FULL_LABELS`); RESULTS.md is written only for the full size unless
 * `BENCH_FULL_WRITE=1`. DynamoDB Local runs in memory (`BENCH_FULL_HEAP_MB`, default 2048); `BENCH_FULL_CONCURRENCY`
 * BatchWriteItem calls in flight (default 16).
 */
import { execSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { startDynamoLocal } from './dynamodb-local.ts';
import { startLocalStack } from './local-stack.ts';
import { must, pool } from './bench-http.ts';
import { BENCH_RATE_LIMIT } from './bench-budgets.ts';
import { failedRows, markdownRows, printRows, runScenarios, steadyState } from './bench-scenarios.ts';
import { createSeedTable, FULL_SEED, planCounts, seedPlanOverApi, seedStraight, type SeedSize } from './bench-full-seed.ts';

/** The nine small tenants beside the large one (over the API, like the small seed). */
const SMALL_TENANTS = 9;
const SMALL_SEED: SeedSize = { goals: 40, checkins: 60, users: 5, teams: 2, labels: 4 };
const ROLLUP_CHILDREN = [10, 400];

const envSize = (): SeedSize => {
  const n = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt);
  return {
    goals: n('BENCH_FULL_GOALS', FULL_SEED.goals),
    checkins: n('BENCH_FULL_CHECKINS', FULL_SEED.checkins),
    users: n('BENCH_FULL_USERS', FULL_SEED.users),
    teams: n('BENCH_FULL_TEAMS', FULL_SEED.teams),
    labels: n('BENCH_FULL_LABELS', FULL_SEED.labels),
  };
};

const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

/** Rollup trees O ← K ← n initiatives, both parents switched to rollup mode after the children exist (as the small seed does). */
async function rollupTreesOverApi(url: string, token: string, period: string, sizes: number[]) {
  const post = async (path: string, body: unknown) => (await must(url, token, 'POST', path, body)).body.data.record.uuid as string;
  const trees = new Map<number, { O: string; K: string; leaves: string[] }>();
  for (const n of sizes) {
    const base = { time_period_uuid: period };
    const O = await post('/rest/v2/objectives', { ...base, title: `Rollup O${n}` });
    const K = await post('/rest/v2/key_results', { ...base, title: `Rollup K${n}`, parents: [O] });
    const leaves = await pool(n, 4, (i) => post('/rest/v2/initiatives', { ...base, title: `Rollup I${n}.${i}`, parents: [K] }));
    await must(url, token, 'PUT', `/rest/v2/key_results/${K}`, { progress_mode: 'rollup' });
    await must(url, token, 'PUT', `/rest/v2/objectives/${O}`, { progress_mode: 'rollup' });
    trees.set(n, { O, K, leaves });
  }
  return trees;
}

function machine() {
  const cpu = cpus();
  let commit = 'unknown';
  try {
    commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    if (execSync('git status --porcelain --untracked-files=no', { encoding: 'utf8' }).trim()) commit += ' (with uncommitted changes)';
  } catch {
    /* not a git checkout */
  }
  let load = '';
  try {
    load = execSync('cat /proc/loadavg', { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ');
  } catch {
    /* not Linux */
  }
  return {
    cpus: cpu.length,
    model: cpu[0]?.model ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    commit,
    load,
  };
}

export async function runFullBench(): Promise<number> {
  Object.assign(process.env, BENCH_RATE_LIMIT);
  process.env.LOG_LEVEL = 'SILENT';
  const size = envSize();
  const isFull = JSON.stringify(size) === JSON.stringify(FULL_SEED);
  const dataDir = mkdtempSync(join(tmpdir(), 'goal-bench-full-'));
  const started = performance.now();
  const startedAt = new Date();
  const tableName = 'goal-tracking';
  const counts = planCounts(size);
  log(
    `full seed: ${size.goals.toLocaleString('en')} goals (levels ${counts.levels.join(' / ')}), ${size.checkins.toLocaleString('en')} check-ins, ${size.users} users, ${size.teams} teams, ${size.labels} labels, 4 periods; straight into DynamoDB Local (in memory)`,
  );

  // 1. the large tenant, straight into the table (no stream yet). DynamoDB Local in memory: on disk (SQLite) it
  // takes ~200 items/s on this kind of machine, in memory ~1,500; the stack then serves this same instance.
  const dynamo = await startDynamoLocal({ heapMb: Number(process.env.BENCH_FULL_HEAP_MB ?? 2048) });
  let seed;
  try {
    await createSeedTable(dynamo.endpoint, tableName);
    seed = await seedStraight({
      endpoint: dynamo.endpoint,
      tableName,
      size,
      concurrency: Number(process.env.BENCH_FULL_CONCURRENCY ?? 16),
      progress: log,
    });
  } catch (err) {
    await dynamo.stop();
    throw err;
  }
  log(
    `straight seed done: ${seed.items.toLocaleString('en')} items (${seed.changes.toLocaleString('en')} changes through the stream projections) in ${seed.seconds.toFixed(0)} s, ${Math.round(seed.items / seed.seconds)} items/s`,
  );

  // 2. the stack on that table: it turns the stream on, so the stream starts after the seed
  const stack = await startLocalStack({ port: 0, dataDir, inMemory: true, quiet: true, tableName, dynamo });
  let exitCode = 0;
  try {
    const { runAdmin } = await import('./admin-commands.ts');
    const { token } = (await runAdmin([
      'issue-token',
      '--tenant',
      seed.tenantId,
      '--user',
      seed.adminUuid,
      '--ttl',
      String(7 * 86400),
    ])) as { token: string };
    const apiStarted = performance.now();
    const rollupTrees = await rollupTreesOverApi(stack.url, token, seed.refs.periods[0]!, ROLLUP_CHILDREN);
    log(`rollup trees of ${ROLLUP_CHILDREN.join(' and ')} children over the API`);
    await Promise.all(
      Array.from({ length: SMALL_TENANTS }, async (_, i) => {
        const t = (await runAdmin([
          'create-tenant',
          '--name',
          `Bench small ${i + 1}`,
          '--admin-email',
          `bench-small-${i + 1}@example.test`,
        ])) as { token: string };
        await seedPlanOverApi(stack.url, t.token, SMALL_SEED);
      }),
    );
    const apiSeconds = (performance.now() - apiStarted) / 1000;
    // the steady state, as on the small seed: the goals just created over the API settled like the rest
    const settled = steadyState(stack.streamIdle, Date.now());
    log(
      `${SMALL_TENANTS} small tenants (${SMALL_SEED.goals} goals, ${SMALL_SEED.checkins} check-ins each) over the API; ${apiSeconds.toFixed(0)} s with the rollup trees`,
    );

    const r = seed.refs;
    const goalsOf = (kind: string) => r.goals.filter((_, i) => r.goalKinds[i] === kind);
    // The scenarios name objectives[1] for "key results under a parent" and objectives[2] for "initiatives in a
    // 3-level subtree" (the subtree's root and two levels below it, as on the small seed): here two team
    // objectives (key results below them, initiatives below those). A company objective's subtree has one
    // level more, and its walk one round trip more.
    const [l1] = counts.levels;
    const objectives = goalsOf('objective');
    const scenarioObjectives = [
      objectives[0]!,
      objectives[l1!]!,
      objectives[l1! + 1]!,
      ...objectives.filter((_, i) => i !== 0 && i !== l1 && i !== l1! + 1),
    ];
    const runStarted = performance.now();
    // the member scenarios' caller (not run on the full seed since issue 20; see docs/benchmarks.md)
    const member = (await runAdmin(['issue-token', '--tenant', seed.tenantId, '--user', r.users[0]!, '--ttl', '86400'])) as {
      token: string;
    };
    const { rateLimiter } = await import('#shared/http/api.ts');
    const rows = await runScenarios(
      stack.url,
      { admin: token, member: member.token, resetLimiter: () => rateLimiter.reset() },
      {
        users: r.users,
        teams: r.teams,
        labels: r.labels,
        labelNames: r.labelNames,
        periods: r.periods,
        objectives: scenarioObjectives,
        keyResults: goalsOf('key_result'),
        rollupTrees,
      },
      settled,
    );
    const runSeconds = (performance.now() - runStarted) / 1000;
    printRows(rows);
    const failed = failedRows(rows);
    const totalSeconds = (performance.now() - started) / 1000;
    const m = machine();
    const md = resultsMarkdown({
      size,
      counts: counts.levels,
      seed,
      apiSeconds,
      runSeconds,
      totalSeconds,
      machine: m,
      startedAt,
      rows,
      failed: failed.length,
    });
    if (isFull || process.env.BENCH_FULL_WRITE === '1') {
      mkdirSync(join(process.cwd(), 'bench'), { recursive: true });
      writeFileSync(join(process.cwd(), 'bench', 'RESULTS.md'), md);
      log('written to bench/RESULTS.md');
    } else console.log(`\n${md}`);
    log(`${failed.length} of ${rows.filter((x) => x.budget).length} budgeted scenarios over budget; ${totalSeconds.toFixed(0)} s in all`);
  } catch (err) {
    console.error(err);
    exitCode = 1;
  } finally {
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return exitCode;
}

function resultsMarkdown(o: {
  size: SeedSize;
  counts: number[];
  seed: { items: number; changes: number; seconds: number };
  apiSeconds: number;
  runSeconds: number;
  totalSeconds: number;
  machine: ReturnType<typeof machine>;
  startedAt: Date;
  rows: Parameters<typeof markdownRows>[0];
  failed: number;
}): string {
  const n = (x: number) => x.toLocaleString('en');
  const m = o.machine;
  return `# Bench results: the full seed

\`npm run bench -- --full\` (scripts/lib/bench-full-seed-run.ts; how the seed is made: docs/benchmarks.md, "The full seed").

## Machine and run

| | |
|---|---|
| date | ${o.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC |
| commit | ${m.commit} |
| CPU | ${m.cpus} x ${m.model} |
| memory | ${m.memoryGb} GB |
| Node.js | ${m.node} |
| load average at the end (1/5/15 min) | ${m.load} |
| straight seed | ${o.seed.seconds.toFixed(0)} s: ${n(o.seed.items)} items written to DynamoDB Local (${n(Math.round(o.seed.items / o.seed.seconds))} items/s), ${n(o.seed.changes)} changes through the stream projections |
| over the API | ${o.apiSeconds.toFixed(0)} s: the rollup trees (10 and 400 children) and ${SMALL_TENANTS} small tenants |
| scenarios | ${o.runSeconds.toFixed(0)} s (with the wait for the steady state: the stream caught up, the goals created over the API older than the page anchors' settle time) |
| in all | ${o.totalSeconds.toFixed(0)} s |

## The tenant

One tenant of ${n(o.size.goals)} goals in 4 levels (${n(o.counts[0]!)} company objectives, ${n(o.counts[1]!)} team objectives under them, ${n(o.counts[2]!)} key results with a metric under those, ${n(o.counts[3]!)} initiatives under the key results), each in its tree's one of 4 periods, with an owner (of ${n(o.size.users)} users), a team (of ${n(o.size.teams)}) and a label (of ${n(o.size.labels)}); the team objectives in rollup mode; ${n(o.size.checkins)} check-ins on the key results and initiatives; plus the two rollup trees of the check-in scenarios (objective ← key result ← 10 and 400 initiatives, both parents in rollup mode) over the API. Beside it, ${SMALL_TENANTS} small tenants of ${SMALL_SEED.goals} goals and ${SMALL_SEED.checkins} check-ins each, over the API.

## Scenarios (the large tenant)

${o.failed} scenario(s) over budget. Round trips count DynamoDB calls in sequence (calls in flight together count once; "calls" counts each); items read counts index entries and items read; units are DynamoDB Local's consumed capacity.

${markdownRows(o.rows)}
`;
}
