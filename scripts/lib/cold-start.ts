/**
 * `npm run bench -- --cold [--check] [--sample N | --size-only]` — bundle size and cold init per function, beside a floor.
 *
 * Every handler of the route table and the workers is built exactly as CDK deploys it (SERVICE_BUNDLING and
 * the split build of infra/constructs/service-bundling.ts), and so is a floor bundle that holds only the
 * DynamoDB document client. The bundle size is what a cold start loads: index.mjs and the chunks it imports
 * statically; chunks imported with `import()` load on first use and count only in the asset size. Cold init
 * is what a fresh Node process spends importing a bundle (module evaluation included), in CPU time and wall
 * time (the budget is checked on CPU time, see coldInit): COLD_RUNS imports of each function, each right
 * after one of the floor, after one uncounted round; a function's ratio is the median of its ratios to the
 * floor imported beside it, so that a busy machine slows both alike. `--sample N` cold-imports N functions (the largest
 * first) and checks every size; `--size-only` imports none: both are cheap enough for CI.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { esbuildOptionsOf, SERVICE_BUNDLING } from '../../infra/constructs/service-bundling.ts';
import { REPO_ROOT } from '../../infra/paths.ts';
import { routes, workers } from '#shared/routes/index.ts';
import { queueUrlEnv } from '#shared/queue/queue.ts';

export const COLD_BUDGET = { initRatio: 1.3, bundleBytes: 600 * 1024 } as const;
// Imports per sampled bundle (each paired with one of the floor) after an uncounted round: with 5, the
// median ratio of one build swung from 1.0x to 1.37x between runs on an idle machine.
const COLD_RUNS = Number(process.env.COLD_RUNS ?? 15);

/** The floor: a function that holds nothing but the DynamoDB document client, created at import like ours. */
const FLOOR_SOURCE = `
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const handler = async (event) => doc.send(new GetCommand({ TableName: process.env.TABLE_NAME, Key: event.key }));
`;

interface Target {
  name: string;
  /** Repository-relative handler, or undefined for the floor. */
  handler?: string;
  file: string;
  /** What a cold start loads: index.mjs and the chunks it imports statically (transitively). */
  bytes: number;
  /** The whole deployed code: every chunk, the lazily imported ones too (source maps excluded). */
  assetBytes: number;
  /** Wall time of each cold import, ms. */
  initMs: number[];
  /** CPU time (user + system, all threads) of each cold import, ms: what the budget is checked on. */
  cpuMs: number[];
}

/** What the deployed functions find in their environment (infra/stack.ts), so that import-time reads succeed. */
function deployedEnvironment(): NodeJS.ProcessEnv {
  const queues = Object.fromEntries(
    workers.map((w) => [queueUrlEnv(w.queue), `https://sqs.eu-west-1.amazonaws.com/000000000000/${w.queue}`]),
  );
  return {
    PATH: process.env.PATH,
    AWS_REGION: 'eu-west-1',
    POWERTOOLS_SERVICE_NAME: 'goal-tracking',
    LOG_LEVEL: 'SILENT',
    TABLE_NAME: 'cold-start',
    ISSUER_URL: 'https://issuer.example.test',
    API_BASE_URL: 'https://api.example.test',
    JWT_AUDIENCE: 'goal-tracking',
    EMAIL_FROM: 'noreply@example.test',
    SES_CONFIGURATION_SET: 'cold-start',
    ...queues,
  };
}

/**
 * Imports the bundle in a fresh Node process; returns how long the import took there (wall) and the CPU time
 * it used, in ms. On a shared machine the wall time mostly measures waiting for a core; the CPU time is the
 * work itself, which is what a Lambda's (fractional) vCPU has to do at init.
 */
function coldInit(file: string, env: NodeJS.ProcessEnv): { wallMs: number; cpuMs: number } {
  const probe = `const c0 = process.cpuUsage(); const t0 = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); const c = process.cpuUsage(c0); process.stdout.write(JSON.stringify({ wallMs: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 })); process.exit(0);`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { env, encoding: 'utf8' });
  if (run.status !== 0)
    throw new Error(
      `importing ${file} failed: ${run.stderr
        .split('\n')
        .filter((l) => /Error/.test(l))
        .slice(0, 2)
        .join(' ')
        .slice(0, 400)}`,
    );
  return JSON.parse(run.stdout) as { wallMs: number; cpuMs: number };
}

/** Bytes loaded at cold start (the entry and its static imports, transitively) and bytes of all code files. */
function sizesOf(metafile: Metafile, entryFile: string): { initBytes: number; assetBytes: number } {
  const outputs = metafile.outputs;
  const code = Object.keys(outputs).filter((f) => f.endsWith('.mjs'));
  const entry = code.find((f) => resolve(f) === resolve(entryFile));
  if (!entry) throw new Error(`cold-start: no ${entryFile} among the outputs`);
  const loaded = new Set<string>();
  const visit = (f: string) => {
    if (loaded.has(f)) return;
    loaded.add(f);
    for (const imp of outputs[f]!.imports) if (imp.kind === 'import-statement' && !imp.external) visit(imp.path);
  };
  visit(entry);
  const bytesOf = (files: Iterable<string>) => [...files].reduce((n, f) => n + statSync(resolve(f)).size, 0);
  return { initBytes: bytesOf(loaded), assetBytes: bytesOf(code) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const kb = (bytes: number) => Math.round(bytes / 1024);

export interface ColdRow {
  function: string;
  bundle_kb: number;
  asset_kb: number;
  size_x: number;
  cpu_ms?: number;
  cpu_x?: number;
  wall_ms?: number;
  wall_x?: number;
  over: string;
}

export interface ColdOptions {
  check: boolean;
  /** Measure bundle sizes only (no cold imports): the cheap CI variant, load-independent. */
  sizeOnly?: boolean;
  /** Cold-import only this many functions (the largest bundles first, then a spread of the rest); sizes are still checked for all. */
  sample?: number;
  /** Cold imports per bundle (median taken). */
  runs?: number;
}

/** The functions to cold-import for `--sample n`: the largest bundles (most likely over), then evenly spread over the rest. */
function sampled(targets: Target[], n: number): Target[] {
  const bySize = [...targets].sort((a, b) => b.bytes - a.bytes);
  const largest = bySize.slice(0, Math.ceil(n / 2));
  const rest = bySize.slice(largest.length);
  const step = rest.length / Math.max(1, n - largest.length);
  const spread = Array.from({ length: Math.min(rest.length, n - largest.length) }, (_, i) => rest[Math.floor(i * step)]!);
  return [...largest, ...spread];
}

export async function runColdBench({
  check,
  sizeOnly = false,
  sample,
  runs = COLD_RUNS,
}: ColdOptions): Promise<{ rows: ColdRow[]; failed: boolean }> {
  const outDir = mkdtempSync(join(tmpdir(), 'goal-cold-'));
  try {
    const env = deployedEnvironment();
    // COLD_ONLY=<substring of a handler path>: measure just those (and the floor), for quick iterations.
    const only = process.env.COLD_ONLY;
    const handlers = new Map<string, string>(); // handler file -> display name (goal kinds share a handler)
    for (const r of routes) if (!handlers.has(r.handler)) handlers.set(r.handler, `${r.method} ${r.path}`);
    for (const w of workers) if (!handlers.has(w.handler)) handlers.set(w.handler, `worker ${w.queue}`);

    const buildOne = async (
      name: string,
      dir: string,
      input: { stdin: { contents: string; resolveDir: string; loader: 'js'; sourcefile: string } } | { entryPoints: string[] },
      handler?: string,
    ): Promise<Target> => {
      const options = esbuildOptionsOf(SERVICE_BUNDLING, dir);
      const result = await build({ ...options, ...input, metafile: true });
      const file = join(dir, 'index.mjs');
      const { initBytes, assetBytes } = sizesOf(result.metafile, file);
      return { name, handler, file, bytes: initBytes, assetBytes, initMs: [], cpuMs: [] };
    };
    const jobs: Array<() => Promise<Target>> = [
      () =>
        buildOne('floor: DynamoDB document client only', join(outDir, 'floor'), {
          stdin: { contents: FLOOR_SOURCE, resolveDir: REPO_ROOT, loader: 'js', sourcefile: 'floor.mjs' },
        }),
    ];
    for (const [handler, name] of handlers) {
      if (only && !handler.includes(only)) continue;
      const dir = join(outDir, String(jobs.length));
      jobs.push(() => buildOne(`${name} (${handler})`, dir, { entryPoints: [join(REPO_ROOT, handler)] }, handler));
    }
    // A few builds at a time (esbuild's service runs them in parallel), results kept in table order.
    const targets: Target[] = new Array(jobs.length);
    let next = 0;
    const failures: unknown[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < jobs.length && failures.length === 0) {
          const at = next++;
          targets[at] = await jobs[at]!().catch((err: unknown) => (failures.push(err), undefined as never));
        }
      }),
    );
    if (failures.length) throw failures[0]; // after every running build has finished writing into outDir
    const floor = targets[0]!;
    const functions = targets.slice(1);
    const timed = sizeOnly ? [] : sample ? sampled(functions, sample) : functions;
    // the floor is measured only beside a function: with none (COLD_ONLY matching nothing) there is no ratio to give
    if (!sizeOnly && timed.length === 0)
      throw new Error(`cold-start: no function to measure${only ? ` (COLD_ONLY=${only} matches none)` : ''}`);
    // The first round is not counted: the first import of a freshly written bundle also pays for the file
    // system's and the machine's cold caches, which is noise here (a deployed cold start reads from its own disk).
    for (const t of [floor, ...timed]) coldInit(t.file, env);
    // The floor is imported right before each function, and each function's ratio is the median of its
    // ratios to that paired floor: a machine that slows down for a while slows both of a pair alike, where a
    // ratio of two medians taken apart swung by 0.1x between runs of one build.
    const ratios = new Map<Target, { cpu: number[]; wall: number[] }>(timed.map((t) => [t, { cpu: [], wall: [] }]));
    for (let run = 0; run < runs; run++)
      for (const t of timed) {
        const base = coldInit(floor.file, env);
        floor.initMs.push(base.wallMs);
        floor.cpuMs.push(base.cpuMs);
        const { wallMs, cpuMs } = coldInit(t.file, env);
        t.initMs.push(wallMs);
        t.cpuMs.push(cpuMs);
        ratios.get(t)!.cpu.push(cpuMs / base.cpuMs);
        ratios.get(t)!.wall.push(wallMs / base.wallMs);
      }

    const floorMs = sizeOnly ? NaN : median(floor.initMs);
    const floorCpuMs = sizeOnly ? NaN : median(floor.cpuMs);
    let failed = false;
    const rows = targets.map((t) => {
      const initMs = t.initMs.length ? median(t.initMs) : undefined;
      const cpuMs = t.cpuMs.length ? median(t.cpuMs) : undefined;
      const paired = ratios.get(t);
      const cpuX = t === floor ? 1 : paired && median(paired.cpu);
      const wallX = t === floor ? 1 : paired && median(paired.wall);
      const over = [
        t.handler && cpuX !== undefined && cpuX > COLD_BUDGET.initRatio ? `init > ${COLD_BUDGET.initRatio}x` : '',
        t.bytes > COLD_BUDGET.bundleBytes ? `bundle > ${kb(COLD_BUDGET.bundleBytes)} KB` : '',
      ]
        .filter(Boolean)
        .join(', ');
      if (over) failed = true;
      return {
        function: t.name,
        bundle_kb: kb(t.bytes),
        asset_kb: kb(t.assetBytes),
        size_x: +(t.bytes / floor.bytes).toFixed(2),
        ...(cpuMs !== undefined && cpuX !== undefined ? { cpu_ms: +cpuMs.toFixed(1), cpu_x: +cpuX.toFixed(2) } : {}),
        ...(initMs !== undefined && wallX !== undefined ? { wall_ms: +initMs.toFixed(1), wall_x: +wallX.toFixed(2) } : {}),
        over,
      };
    });
    console.table(rows);
    if (!sizeOnly)
      console.log(
        `load average while measuring: ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')} (${availableParallelism()} cores)`,
      );
    const fns = rows.slice(1);
    const timedFns = fns.filter((r) => r.cpu_x !== undefined);
    console.log(
      `${fns.length} functions (bundle = what a cold start loads; asset = all chunks), ${sizeOnly ? 'sizes only' : `${timedFns.length} cold-imported ${runs} times each, each beside the floor`}; floor ${kb(floor.bytes)} KB` +
        (sizeOnly ? '. ' : `, ${floorCpuMs.toFixed(1)} ms CPU (${floorMs.toFixed(1)} ms wall). `) +
        `Median function: ${median(fns.map((r) => r.bundle_kb))} KB` +
        (timedFns.length
          ? `, ${median(timedFns.map((r) => r.cpu_x!))}x floor CPU (${median(timedFns.map((r) => r.wall_x!))}x wall); worst ${Math.max(...timedFns.map((r) => r.cpu_x!))}x CPU (${Math.max(...timedFns.map((r) => r.wall_x!))}x wall)`
          : '') +
        `; largest ${Math.max(...fns.map((r) => r.bundle_kb))} KB (asset ${Math.max(...fns.map((r) => r.asset_kb))} KB).`,
    );
    if (check)
      console.log(
        failed
          ? `Over budget (init CPU <= ${COLD_BUDGET.initRatio}x floor, bundle <= ${kb(COLD_BUDGET.bundleBytes)} KB).`
          : 'Within budget.',
      );
    return { rows, failed };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}
