import { join } from 'node:path';
import type { BuildOptions } from 'esbuild';
import { OutputFormat, type BundlingOptions, type ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { REPO_ROOT } from '../paths.ts';

/**
 * How every function of the service is bundled (ServiceFunction), in one place so `npm run bench -- --cold`
 * builds and measures exactly the bundles CDK deploys: an ESM bundle by the local esbuild (no Docker) with
 * the AWS SDK bundled (the version we test with, not the runtime's), minified with source maps, and split
 * (splitBundleHooks below) so that what a function imports lazily is not loaded at cold start.
 */
export const SERVICE_BUNDLING = {
  format: OutputFormat.ESM,
  target: 'node22',
  minify: true,
  sourceMap: true,
  // Bundle the SDK: the runtime's copy drifts from the version in package-lock.json.
  bundleAwsSDK: true,
  externalModules: [],
  // Prefer ESM entry points of dual packages so tree-shaking works.
  mainFields: ['module', 'main'],
  // Bundled CommonJS dependencies call require() for Node built-ins; an ESM bundle has no require.
  banner: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  // The handlers import `#shared/*.ts`: esbuild resolves package.json "imports" and .ts extensions itself.
  tsconfig: join(REPO_ROOT, 'tsconfig.json'),
} as const satisfies BundlingOptions;

/**
 * The esbuild options aws-cdk-lib's NodejsFunction derives from its bundling props (`esbuild --bundle
 * --platform=node ...`), plus code splitting: each module a function loads with `import()` (STS, KMS, the
 * idempotency layer, the route table, the OpenAPI builder) goes to its own chunk next to index.mjs, loaded on
 * first use. Throws on a prop this translation does not know, so the measured bundles cannot silently drift
 * from the deployed ones when SERVICE_BUNDLING grows.
 */
export function esbuildOptionsOf(bundling: typeof SERVICE_BUNDLING, outdir: string): BuildOptions {
  const known = new Set(['format', 'target', 'minify', 'sourceMap', 'bundleAwsSDK', 'externalModules', 'mainFields', 'banner', 'tsconfig']);
  for (const key of Object.keys(bundling))
    if (!known.has(key)) throw new Error(`service-bundling: bundling option ${key} is not translated to esbuild`);
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
    splitting: true,
    outdir,
    // index.mjs is what the Lambda handler setting (index.handler) names; chunks sit beside it.
    entryNames: 'index',
    chunkNames: '[name]-[hash]',
    outExtension: { '.js': '.mjs' },
  };
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The esbuild command line for `options` (the subset esbuildOptionsOf sets). */
export function esbuildCommand(entry: string, options: BuildOptions): string {
  const args = [
    shellQuote(entry),
    '--bundle',
    `--platform=${options.platform}`,
    `--format=${options.format}`,
    `--target=${options.target}`,
    ...(options.minify ? ['--minify'] : []),
    ...(options.sourcemap ? ['--sourcemap'] : []),
    ...(options.external ?? []).map((e) => `--external:${shellQuote(e)}`),
    `--main-fields=${(options.mainFields ?? []).join(',')}`,
    `--banner:js=${shellQuote(options.banner!.js!)}`,
    `--tsconfig=${shellQuote(options.tsconfig!)}`,
    `--log-level=${options.logLevel}`,
    ...(options.splitting ? ['--splitting'] : []),
    `--outdir=${shellQuote(options.outdir!)}`,
    `--entry-names=${shellQuote(options.entryNames!)}`,
    `--chunk-names=${shellQuote(options.chunkNames!)}`,
    ...Object.entries(options.outExtension ?? {}).map(([from, to]) => `--out-extension:${from}=${to}`),
  ];
  return `npx --no-install esbuild ${args.join(' ')}`;
}

/**
 * NodejsFunction always bundles to one file (`--outfile`), where esbuild inlines every `import()`: the lazily
 * loaded modules would still be parsed at every cold start and count in the bundle. After its build, this
 * hook replaces that file with the split build of esbuildOptionsOf (index.mjs and its chunks), then runs
 * `next`'s afterBundling (files copied into the bundle).
 */
export function splitBundleHooks(handler: string, next?: ICommandHooks): ICommandHooks {
  return {
    beforeBundling: (inputDir, outputDir) => next?.beforeBundling(inputDir, outputDir) ?? [],
    beforeInstall: (inputDir, outputDir) => next?.beforeInstall(inputDir, outputDir) ?? [],
    afterBundling: (inputDir, outputDir) => [
      `rm -f ${shellQuote(join(outputDir, 'index.mjs'))} ${shellQuote(join(outputDir, 'index.mjs.map'))}`,
      `cd ${shellQuote(inputDir)} && ${esbuildCommand(join(inputDir, handler), esbuildOptionsOf(SERVICE_BUNDLING, outputDir))}`,
      ...(next?.afterBundling(inputDir, outputDir) ?? []),
    ],
  };
}
