import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCALAR_BUNDLE } from '#shared/docs/scalar-bundle.ts';
import { routes, workers } from '#shared/routes/index.ts';
import { REPO_ROOT } from '../../infra/paths.ts';
import type { Json } from './stack.fixture.ts';

const run = promisify(execFile);

/** The environment of a machine with no AWS account: no credentials, no profile, no instance metadata. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && !k.startsWith('CDK_')));
  return {
    ...env,
    AWS_CONFIG_FILE: '/nonexistent',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_DISABLE_CLI_TELEMETRY: '1',
  };
}

/**
 * `npm run synth` end to end: the pinned CLI runs the app, every handler of the route table and worker list is
 * bundled by the local esbuild (the only test that bundles: the others skip it), and the cdk-nag packs run as
 * validation plugins (synthesis fails on a finding). Slow by nature (one esbuild run per function).
 */
describe('cdk synth (offline, real bundling)', () => {
  let out: string;
  let templates: Json[];
  let stdout: string;

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'goal-tracking-synth-'));
    ({ stdout } = await run('npx', ['cdk', 'synth', '--quiet', '--output', out], {
      cwd: REPO_ROOT,
      env: offlineEnv(),
      maxBuffer: 64 * 1024 * 1024,
    }));
    templates = readdirSync(out)
      .filter((f) => f.endsWith('.template.json'))
      .map((f) => JSON.parse(readFileSync(join(out, f), 'utf8')));
  }, 900_000);

  afterAll(() => rmSync(out, { recursive: true, force: true }));

  const lambdas = () => templates.flatMap((t) => Object.values<Json>(t.Resources).filter((r) => r.Type === 'AWS::Lambda::Function'));

  it('writes the templates with no AWS credentials: the stack and one nested stack per route group', () => {
    expect(existsSync(join(out, 'GoalTracking.template.json'))).toBe(true);
    const groups = new Set(routes.map((r) => r.doc.tag));
    expect(templates).toHaveLength(1 + groups.size);
    expect(lambdas()).toHaveLength(routes.length + workers.length + 2); // + the change-stream processor and the data-source sweep
    expect(stdout).not.toMatch(/AwsSolutions-|Serverless-/); // nothing reported by the nag packs
  });

  it('bundles every handler as a minified ESM file with its source map and the AWS SDK inside', () => {
    for (const fn of lambdas()) {
      const dir = join(out, fn.Metadata['aws:asset:path']);
      const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
      expect(existsSync(join(dir, 'index.mjs.map')), fn.Properties.Description).toBe(true);
      expect(code.startsWith('import { createRequire as __cr }')).toBe(true); // the banner: require() for CJS dependencies
      expect(code).toMatch(/sourceMappingURL=index\.mjs\.map/);
      expect(code).not.toMatch(/from\s*["']@aws-sdk\//); // bundled, not left to the runtime's copy
      expect(code).not.toMatch(/from\s*["']#shared\//); // package.json "imports" resolved
      expect(code.length / code.split('\n').length).toBeGreaterThan(1000); // minified: long lines, no indentation
    }
  });

  it('produces bundles that load and answer: GET /openapi.json through its bundled handler', async () => {
    const fn = lambdas().find((f) => f.Properties.Description === 'GET /openapi.json')!;
    const entry = pathToFileURL(join(out, fn.Metadata['aws:asset:path'], 'index.mjs')).href;
    const script = `const { handler } = await import(${JSON.stringify(entry)});
      const res = await handler({ version: '2.0', routeKey: 'GET /openapi.json', rawPath: '/openapi.json', rawQueryString: '', headers: {}, requestContext: { requestId: 'synth-test', http: { method: 'GET', path: '/openapi.json' } } }, { awsRequestId: 'synth-test' });
      console.log(JSON.stringify({ status: res.statusCode, openapi: JSON.parse(res.body).openapi, paths: Object.keys(JSON.parse(res.body).paths).length }));`;
    const { stdout: result } = await run(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], {
      cwd: tmpdir(),
      env: offlineEnv(),
    });
    const last = JSON.parse(result.trim().split('\n').at(-1)!);
    expect(last.status).toBe(200);
    expect(last.openapi).toMatch(/^3\.1/);
    expect(last.paths).toBeGreaterThan(0);
  });
  it('puts the API reference script into the bundle of GET /docs/scalar.js only, where its handler reads it', async () => {
    for (const fn of lambdas()) {
      const dir = join(out, fn.Metadata['aws:asset:path']);
      const isScript = fn.Properties.Description === 'GET /docs/scalar.js';
      expect(existsSync(join(dir, SCALAR_BUNDLE)), fn.Properties.Description).toBe(isScript);
      expect(readFileSync(join(dir, 'index.mjs'), 'utf8').includes('@scalar/api-reference@'), fn.Properties.Description).toBe(false); // not inlined anywhere
    }
    const fn = lambdas().find((f) => f.Properties.Description === 'GET /docs/scalar.js')!;
    const dir = join(out, fn.Metadata['aws:asset:path']);
    const script = `const { handler } = await import(${JSON.stringify(pathToFileURL(join(dir, 'index.mjs')).href)});
      const res = await handler({ version: '2.0', routeKey: 'GET /docs/scalar.js', rawPath: '/docs/scalar.js', rawQueryString: '', headers: { 'accept-encoding': 'gzip' }, requestContext: { requestId: 'synth-test', http: { method: 'GET', path: '/docs/scalar.js' } } }, { awsRequestId: 'synth-test' });
      const { gunzipSync } = await import('node:zlib');
      console.log(JSON.stringify({ status: res.statusCode, encoding: res.headers['content-encoding'], length: gunzipSync(Buffer.from(res.body, 'base64')).length }));`;
    // LAMBDA_TASK_ROOT as the Lambda runtime sets it: the directory the bundle was unpacked into.
    const { stdout: result } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: tmpdir(),
      env: { ...offlineEnv(), LAMBDA_TASK_ROOT: dir },
    });
    expect(JSON.parse(result.trim().split('\n').at(-1)!)).toEqual({
      status: 200,
      encoding: 'gzip',
      length: readFileSync(join(REPO_ROOT, SCALAR_BUNDLE)).length,
    });
  });
});
