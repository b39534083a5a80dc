import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync, type BuildOptions } from 'esbuild';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { REPO_ROOT } from '../paths.ts';

/** Bundled CommonJS dependencies call require() for Node built-ins; an ESM bundle has no require. */
const REQUIRE_BANNER = "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);";

/**
 * shared/freeze-prototype.ts compiled to one statement that runs it (`(()=>{function …;freezeObjectPrototype()})();`):
 * in the banner, it runs at the top of every file of a bundle, index.mjs and each chunk. A module's static
 * imports are evaluated before its own code, so the first file Node evaluates is a chunk: its first statement
 * freezes Object.prototype, before any dependency's code runs and long before a request; the other files find it
 * frozen and do nothing. Compiled from the module's text, so the bundles and the local stack run the same code
 * and every build of the same source gives the same bytes.
 */
export const FREEZE_PROTOTYPE_BANNER = transformSync(
  `${readFileSync(join(REPO_ROOT, 'shared/freeze-prototype.ts'), 'utf8')}\nfreezeObjectPrototype();\n`,
  { loader: 'ts', format: 'iife', minify: true, target: 'node22', legalComments: 'none' },
).code.trim();

/**
 * How every function of the service is bundled (ServiceFunction), in one place so `npm run bench -- --cold`
 * builds and measures exactly the bundles CDK deploys: an ESM bundle by the local esbuild (no Docker) with
 * the AWS SDK bundled (the version we test with, not the runtime's), minified with source maps, and split
 * (esbuildOptionsOf below) so that what a function imports lazily is not loaded at cold start. Written in
 * NodejsFunction's bundling vocabulary (BundlingOptions), which esbuildOptionsOf translates.
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
  // require() for bundled CommonJS dependencies, then Object.prototype frozen before any other code of the
  // function runs (issue 32: no request may change what every object of the process inherits)
  banner: `${REQUIRE_BANNER}\n${FREEZE_PROTOTYPE_BANNER}`,
  // The handlers import `#shared/*.ts`: esbuild resolves package.json "imports" and .ts extensions itself.
  tsconfig: join(REPO_ROOT, 'tsconfig.json'),
} as const satisfies BundlingOptions;

/**
 * The esbuild options for `bundling` (what NodejsFunction would derive from the same props: `esbuild --bundle
 * --platform=node ...`), plus code splitting, which NodejsFunction cannot do (it always bundles to one file,
 * where esbuild inlines every `import()`): each module a function loads with `import()` (STS, KMS, the
 * idempotency layer, the route table, the OpenAPI builder) goes to its own chunk next to index.mjs, loaded on
 * first use. ServiceFunction and the cold-start bench both build with these, through the esbuild JS API.
 * Throws on a prop this translation does not know, so SERVICE_BUNDLING cannot grow an option that is
 * silently ignored.
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
