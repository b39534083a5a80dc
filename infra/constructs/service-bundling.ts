import { join } from 'node:path';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { REPO_ROOT } from '../paths.ts';

/**
 * How every function of the service is bundled (ServiceFunction), in one place so `npm run bench -- --cold`
 * builds and measures exactly the bundles CDK deploys: an ESM bundle by the local esbuild (no Docker) with
 * the AWS SDK bundled (the version we test with, not the runtime's), minified with source maps.
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
