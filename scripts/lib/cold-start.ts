/**
 * `npm run bench -- --cold [--check]` — bundle size and cold init per function, beside a floor.
 *
 * Every handler of the route table and the workers is built exactly as CDK builds it (SERVICE_BUNDLING,
 * translated below to the esbuild options NodejsFunction passes), and so is a floor bundle that holds only
 * the DynamoDB document client. Cold init is the time a fresh Node process takes to import a bundle
 * (module evaluation included), the median of COLD_RUNS processes; the runs are interleaved over all bundles
 * so that a busy machine slows every bundle alike, and results are printed as ratios to the floor.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import { SERVICE_BUNDLING } from '../../infra/constructs/service-bundling.ts';
import { REPO_ROOT } from '../../infra/paths.ts';
import { routes, workers } from '#shared/routes/index.ts';
import { queueUrlEnv } from '#shared/queue/queue.ts';

export const COLD_BUDGET = { initRatio: 1.3, bundleBytes: 600 * 1024 } as const;
const COLD_RUNS = Number(process.env.COLD_RUNS ?? 5);

/** The floor: a function that holds nothing but the DynamoDB document client, created at import like ours. */
const FLOOR_SOURCE = `
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const handler = async (event) => doc.send(new GetCommand({ TableName: process.env.TABLE_NAME, Key: event.key }));
`;

/**
 * The esbuild options aws-cdk-lib's NodejsFunction derives from its bundling props (`esbuild --bundle
 * --platform=node ...`). Throws on a prop this translation does not know, so the measured bundles cannot
 * silently drift from the deployed ones when SERVICE_BUNDLING grows.
 */
export function esbuildOptionsOf(bundling: typeof SERVICE_BUNDLING): BuildOptions {
  const known = new Set(['format', 'target', 'minify', 'sourceMap', 'bundleAwsSDK', 'externalModules', 'mainFields', 'banner', 'tsconfig']);
  for (const key of Object.keys(bundling)) if (!known.has(key)) throw new Error(`cold-start: bundling option ${key} is not translated to esbuild`);
  return {
    bundle: true,
    platform: 'node',
    format: bundling.format,
    target: bundling.target,
    minify: bundling.minify,
    sourcemap: bundling.sourceMap,
    external: [...bundling.externalModules, ...(bundling.bundleAwsSDK ? [] : ['@aws-sdk/*'])],
    mainFields: [...bundling.mainFields],
    banner: { js: bundling.banner },
    tsconfig: bundling.tsconfig,
    logLevel: 'warning',
  };
}

interface Target {
  name: string;
  /** Repository-relative handler, or undefined for the floor. */
  handler?: string;
  file: string;
  bytes: number;
  initMs: number[];
}

/** What the deployed functions find in their environment (infra/stack.ts), so that import-time reads succeed. */
function deployedEnvironment(): NodeJS.ProcessEnv {
  const queues = Object.fromEntries(workers.map((w) => [queueUrlEnv(w.queue), `https://sqs.eu-west-1.amazonaws.com/000000000000/${w.queue}`]));
  return {
    PATH: process.env.PATH,
    AWS_REGION: 'eu-west-1',
    POWERTOOLS_SERVICE_NAME: 'goal-tracking',
    LOG_LEVEL: 'SILENT',
    TABLE_NAME: 'cold-start',
    ISSUER_URL: 'https://issuer.example.test',
    JWT_AUDIENCE: 'goal-tracking',
    EMAIL_FROM: 'noreply@example.test',
    SES_CONFIGURATION_SET: 'cold-start',
    ...queues,
  };
}

/** Imports the bundle in a fresh Node process and returns how long the import took there, in ms. */
function coldInit(file: string, env: NodeJS.ProcessEnv): number {
  const probe = `const t0 = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t0)); process.exit(0);`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`importing ${file} failed: ${run.stderr.split('\n').filter((l) => /Error/.test(l)).slice(0, 2).join(' ').slice(0, 400)}`);
  return Number(run.stdout);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const kb = (bytes: number) => Math.round(bytes / 1024);

export interface ColdRow { function: string; bundle_kb: number; size_x: number; init_ms: number; init_x: number; over: string }

export async function runColdBench({ check }: { check: boolean }): Promise<{ rows: ColdRow[]; failed: boolean }> {
  const outDir = mkdtempSync(join(tmpdir(), 'goal-cold-'));
  try {
    const options = esbuildOptionsOf(SERVICE_BUNDLING);
    const env = deployedEnvironment();
    // COLD_ONLY=<substring of a handler path>: measure just those (and the floor), for quick iterations.
    const only = process.env.COLD_ONLY;
    const handlers = new Map<string, string>(); // handler file -> display name (goal kinds share a handler)
    for (const r of routes) if (!handlers.has(r.handler)) handlers.set(r.handler, `${r.method} ${r.path}`);
    for (const w of workers) if (!handlers.has(w.handler)) handlers.set(w.handler, `worker ${w.queue}`);

    const targets: Target[] = [];
    const floorFile = join(outDir, 'floor', 'index.mjs');
    await build({ ...options, stdin: { contents: FLOOR_SOURCE, resolveDir: REPO_ROOT, loader: 'js', sourcefile: 'floor.mjs' }, outfile: floorFile });
    targets.push({ name: 'floor: DynamoDB document client only', file: floorFile, bytes: statSync(floorFile).size, initMs: [] });
    let i = 0;
    for (const [handler, name] of handlers) {
      if (only && !handler.includes(only)) continue;
      const file = join(outDir, String(i++), 'index.mjs');
      await build({ ...options, entryPoints: [join(REPO_ROOT, handler)], outfile: file });
      targets.push({ name: `${name} (${handler})`, handler, file, bytes: statSync(file).size, initMs: [] });
    }
    for (let run = 0; run < COLD_RUNS; run++) for (const t of targets) t.initMs.push(coldInit(t.file, env));

    const floor = targets[0]!;
    const floorMs = median(floor.initMs);
    let failed = false;
    const rows = targets.map((t) => {
      const initMs = median(t.initMs);
      const over = [
        t.handler && initMs / floorMs > COLD_BUDGET.initRatio ? `init > ${COLD_BUDGET.initRatio}x` : '',
        t.bytes > COLD_BUDGET.bundleBytes ? `bundle > ${kb(COLD_BUDGET.bundleBytes)} KB` : '',
      ].filter(Boolean).join(', ');
      if (over) failed = true;
      return { function: t.name, bundle_kb: kb(t.bytes), size_x: +(t.bytes / floor.bytes).toFixed(2), init_ms: +initMs.toFixed(1), init_x: +(initMs / floorMs).toFixed(2), over };
    });
    console.table(rows);
    const fns = rows.slice(1);
    console.log(`${fns.length} functions, ${COLD_RUNS} cold imports each; floor ${kb(floor.bytes)} KB, ${floorMs.toFixed(1)} ms. ` +
      `Median function: ${median(fns.map((r) => r.bundle_kb))} KB, ${median(fns.map((r) => r.init_x))}x floor; worst ${Math.max(...fns.map((r) => r.init_x))}x floor, largest ${Math.max(...fns.map((r) => r.bundle_kb))} KB.`);
    if (check) console.log(failed ? `Over budget (init <= ${COLD_BUDGET.initRatio}x floor, bundle <= ${kb(COLD_BUDGET.bundleBytes)} KB).` : 'Within budget.');
    return { rows, failed };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}
