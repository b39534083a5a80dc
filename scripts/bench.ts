/**
 * `npm run bench` — data-access cost of the main endpoints (docs/benchmarks.md). Starts a throwaway local stack
 * (DynamoDB Local in memory), seeds a tenant, then reports per request the DynamoDB round trips (in sequence),
 * consumed read/write capacity and items read from the local stack's x-db-* headers, which do not depend on how
 * fast this machine is. Wall-clock times are printed for orientation only.
 *
 *   npm run bench                 BENCH_GOALS goals (default 10,000) seeded over HTTP; the table
 *   npm run bench -- --check      a small seed (BENCH_GOALS default 1,000; with the 410 rollup leaves, page 50 of
 *                                 initiatives exists); exit 1 when a budget (issues 9, 20) is broken, a row
 *                                 answers other than 2xx or lacks a metrics header
 *                                 (BENCH_GOAL_LABELS=0: goals seeded without a label, so no page reads label names)
 *   npm run bench -- --cold       bundle size and cold init per function (scripts/lib/cold-start.ts)
 *   npm run bench -- --full       the full seed (100,000 goals, 500,000 check-ins) straight into DynamoDB Local,
 *                                 then every scenario; writes bench/RESULTS.md (scripts/lib/bench-full-seed-run.ts)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack } from './lib/local-stack.ts';
import { BENCH_RATE_LIMIT } from './lib/bench-budgets.ts';
import { failedRows, markdownRows, printRows, runScenarios, steadyState } from './lib/bench-scenarios.ts';
import { seedOverApi } from './lib/bench-seed-api.ts';

const args = process.argv.slice(2);
if (args.includes('--cold')) {
  const { runColdBench } = await import('./lib/cold-start.ts');
  const check = args.includes('--check');
  const sample = args.includes('--sample') ? Number(args[args.indexOf('--sample') + 1]) : undefined;
  const { failed } = await runColdBench({ check, sizeOnly: args.includes('--size-only'), sample });
  process.exit(check && failed ? 1 : 0);
}

if (args.includes('--full')) {
  // before the import: the logger reads its level when the domain modules load
  Object.assign(process.env, { ...BENCH_RATE_LIMIT, LOG_LEVEL: 'SILENT' });
  const { runFullBench } = await import('./lib/bench-full-seed-run.ts');
  process.exit(await runFullBench());
}

const check = args.includes('--check');
// the limiter on, as deployed, with a limit that admits everything the bench sends: its calls are part of the cost
Object.assign(process.env, BENCH_RATE_LIMIT);
process.env.LOG_LEVEL = 'SILENT';
const GOALS = Number(process.env.BENCH_GOALS ?? (check ? 1_000 : 10_000));

const dataDir = mkdtempSync(join(tmpdir(), 'goal-bench-'));
const stack = await startLocalStack({ port: 0, dataDir, inMemory: true, quiet: true });
process.env.DATA_DIR = dataDir;
Object.assign(process.env, { TABLE_NAME: stack.tableName, DYNAMODB_ENDPOINT: stack.dynamoEndpoint });
const { runAdmin } = await import('./lib/admin-commands.ts');
// the stack's handlers run in this process: this is the limiter they share (one container's)
const { rateLimiter } = await import('#shared/http/api.ts');

let exitCode = 0;
try {
  const started = performance.now();
  const t = (await runAdmin(['create-tenant', '--name', 'Bench', '--admin-email', 'bench@example.test'])) as {
    token: string;
    tenant_uuid: string;
  };
  const seed = await seedOverApi(stack.url, t.token, {
    goals: GOALS,
    rollupChildren: [10, 400],
    concurrency: 16,
    goalLabels: process.env.BENCH_GOAL_LABELS !== '0',
  });
  const labelNames = seed.labels.map((_, i) => `label-${i}`);
  console.log(
    `\nTenant: ${seed.goals} goals (${seed.objectives.length} objectives, ${seed.keyResults.length} key results, ${seed.initiatives.length} initiatives) + rollup trees of 10 and 400 children, ${seed.users.length} users, ${seed.teams.length} teams, ${seed.labels.length} labels; seeded over HTTP in ${seed.seconds.toFixed(0)} s\n`,
  );
  // the scenarios measure the steady state: stream caught up, the seed older than the anchors' settle time
  const settled = steadyState(stack.streamIdle, Date.now());
  const member = (await runAdmin(['issue-token', '--tenant', t.tenant_uuid, '--user', seed.users[0]!])) as { token: string };
  const callers = { admin: t.token, member: member.token, resetLimiter: () => rateLimiter.reset() };
  const rows = await runScenarios(stack.url, callers, { ...seed, labelNames }, settled);
  printRows(rows);
  writeFileSync(join(process.cwd(), 'bench-results.json'), JSON.stringify({ goals: seed.goals, rows }, null, 2));
  const failed = failedRows(rows);
  console.log(`\n${markdownRows(rows)}\n`);
  console.log(
    `Written to bench-results.json. Round trips count DynamoDB calls in sequence (calls in flight together count once; "calls" counts each); items read counts index entries and items read; units are DynamoDB Local's consumed capacity. ${((performance.now() - started) / 1000).toFixed(0)} s.`,
  );
  if (check) {
    console.log(
      failed.length ? `\n${failed.length} scenario(s) over budget: ${failed.map((r) => r.scenario).join(', ')}` : '\nEvery budget holds.',
    );
    if (failed.length) exitCode = 1;
  }
} finally {
  await stack.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(exitCode);
