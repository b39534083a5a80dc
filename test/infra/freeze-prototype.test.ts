import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { App, type CfnResource, Duration, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { afterAll, describe, expect, it } from 'vitest';
import { esbuildOptionsOf, FREEZE_PROTOTYPE_BANNER, SERVICE_BUNDLING } from '../../infra/constructs/service-bundling.ts';
import { ServiceFunction } from '../../infra/constructs/service-function.ts';

const run = promisify(execFile);

/**
 * Every function freezes Object.prototype at init (issue 32, contract section 19: no request changes anything
 * outside its tenant's data, the process included). Every function is bundled by ServiceFunction with
 * esbuildOptionsOf(SERVICE_BUNDLING), whose banner runs shared/freeze-prototype.ts at the top of each output
 * file; the synth test checks each deployed bundle starts with that banner's first line. Here: the options carry
 * the freeze, and two real functions, bundled through ServiceFunction as CDK deploys them, load in a fresh Node
 * process with Object.prototype frozen, keep `obj.toString = f` working (the override mistake a plain freeze
 * makes), and answer.
 */

/** What a fresh Node process reports after importing a bundle and calling its handler once. */
interface Probe {
  frozenBefore: boolean;
  frozen: boolean;
  added: boolean;
  changed: boolean;
  override: string;
  status: number;
  body: string;
}

const probeScript = (entry: string, event: unknown) => `
  const frozenBefore = Object.isFrozen(Object.prototype);
  const { handler } = await import(${JSON.stringify(entry)});
  const frozen = Object.isFrozen(Object.prototype);
  try { Object.prototype.polluted = 1; } catch {}
  try { JSON.parse('{"__proto__":{}}').__proto__.polluted = 2; } catch {}
  const added = ({}).polluted !== undefined;
  const before = Object.prototype.toString;
  try { Object.prototype.toString = () => 'changed'; } catch {}
  const changed = Object.prototype.toString !== before;
  const own = {};
  own.toString = () => 'own'; // an assignment of an inherited name still makes an own property
  const res = await handler(${JSON.stringify(event)}, { awsRequestId: 'freeze-test', getRemainingTimeInMillis: () => 10000 });
  console.log(JSON.stringify({ frozenBefore, frozen, added, changed, override: String(own), status: res.statusCode, body: String(res.body).slice(0, 300) }));`;

/** What the deployed functions find in their environment, so that import-time reads succeed; no AWS account. */
const env = {
  PATH: process.env.PATH,
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'unused',
  AWS_SECRET_ACCESS_KEY: 'unused',
  AWS_EC2_METADATA_DISABLED: 'true',
  POWERTOOLS_SERVICE_NAME: 'goal-tracking',
  POWERTOOLS_METRICS_DISABLED: 'true',
  LOG_LEVEL: 'SILENT',
  TABLE_NAME: 'freeze-test',
  ISSUER_URL: 'https://issuer.example.test',
  API_BASE_URL: 'https://api.example.test',
  JWT_AUDIENCE: 'goal-tracking',
};

const httpEvent = (method: string, path: string, body?: string) => ({
  version: '2.0',
  routeKey: `${method} ${path}`,
  rawPath: path,
  rawQueryString: '',
  headers: body ? { 'content-type': 'application/scim+json' } : {},
  body,
  isBase64Encoded: false,
  requestContext: { requestId: 'freeze-test', http: { method, path } },
});

describe('every function freezes Object.prototype at init', () => {
  const out = mkdtempSync(join(tmpdir(), 'goal-freeze-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("puts the freeze in the banner of every function's bundling, after require()", () => {
    const options = esbuildOptionsOf(SERVICE_BUNDLING, out);
    expect(options.banner).toEqual({ js: SERVICE_BUNDLING.banner });
    const [requireLine, freeze] = SERVICE_BUNDLING.banner.split('\n');
    expect(requireLine).toMatch(/^import \{ createRequire as __cr \}/);
    expect(freeze).toBe(FREEZE_PROTOTYPE_BANNER);
    expect(FREEZE_PROTOTYPE_BANNER).toMatch(/^\(\(\)=>\{.*Object\.freeze\(.*\}\)\(\);$/s);
  });

  const bundled = (handler: string) => {
    const app = new App({ outdir: join(out, handler.replaceAll('/', '-')), context: { 'aws:cdk:enable-asset-metadata': true } });
    const stack = new Stack(app, 'Freeze');
    const fn = new ServiceFunction(stack, 'Fn', {
      handler,
      description: handler,
      rolePath: '/freeze-test/',
      timeout: Duration.seconds(10),
      logRetention: RetentionDays.ONE_DAY,
    });
    const assetPath = (fn.fn.node.defaultChild as CfnResource).getMetadata('aws:asset:path') as string;
    return join(app.outdir, assetPath);
  };

  const probe = async (dir: string, event: unknown): Promise<Probe> => {
    const entry = pathToFileURL(join(dir, 'index.mjs')).href;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probeScript(entry, event)], { cwd: tmpdir(), env });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as Probe;
  };

  const expectFrozen = (p: Probe) =>
    expect(p).toMatchObject({ frozenBefore: false, frozen: true, added: false, changed: false, override: 'own' });

  it('GET /openapi.json, bundled as deployed: every file starts with the freeze, and it loads frozen and answers', async () => {
    const dir = bundled('functions/platform/openapi.ts');
    const files = readdirSync(dir).filter((f) => f.endsWith('.mjs'));
    expect(files.length).toBeGreaterThan(1); // index.mjs and its chunks
    for (const f of files) expect(readFileSync(join(dir, f), 'utf8').startsWith(SERVICE_BUNDLING.banner), f).toBe(true);
    const p = await probe(dir, httpEvent('GET', '/openapi.json'));
    expectFrozen(p);
    // the OpenAPI builder (zod-to-openapi) is imported on this first request, after the freeze
    expect(p.status).toBe(200);
    expect(p.body).toMatch(/"openapi":"3\.1/);
  }, 120_000);

  it('PATCH /scim/v2/Users/{id}, bundled as deployed: loads frozen and answers through the whole chain', async () => {
    const dir = bundled('functions/scim/users-patch.ts');
    const body = JSON.stringify({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'add', value: { 'constructor.prototype.role': 'admin' } }],
    });
    const p = await probe(dir, httpEvent('PATCH', '/scim/v2/Users/00000000-0000-4000-8000-000000000000', body));
    expectFrozen(p);
    // no caller claims: refused by the chain (in SCIM's shape), the body never applied
    expect(p.status).toBe(401);
    expect(JSON.parse(p.body).schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:Error']);
  }, 120_000);
});
