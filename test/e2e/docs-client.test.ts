import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { newTenant } from '../support/api.ts';
import { matchesDocument } from '../support/client.ts';
import { createPeriod } from './goals.fixture.ts';

const run = promisify(execFile);

describe('the typed client (clients/typescript)', () => {
  it('is committed up to date with docs/openapi.json (run `npm run client`)', async () => {
    const { stdout } = await run('node_modules/.bin/tsx', ['scripts/client.ts', '--check']).catch(
      (err: { stdout: string; stderr: string }) => {
        throw new Error(`${err.stderr}${err.stdout}`);
      },
    );
    expect(stdout).toContain('is up to date');
  }, 120_000);

  it('fails a call whose answer the document does not describe: an undocumented status or a body off its schema', async () => {
    const call = (status: number, body: unknown) =>
      matchesDocument.onResponse!({
        request: new Request('http://api.test/rest/v2/objectives/x'),
        response: new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } }),
        schemaPath: '/rest/v2/objectives/{id}',
        params: {},
        id: 'test',
        options: {} as never,
      });
    await expect(call(418, {})).rejects.toThrow('GET /rest/v2/objectives/{id} -> 418: status not documented');
    await expect(call(200, { data: { type: 'objective', checks: {}, access_source: 'admin' } })).rejects.toThrow(
      "must have required property 'record'",
    );
    await expect(
      call(404, { error: { status: 404, code: 'not_found', message: 'gone', details: [], request_id: 'r' } }),
    ).resolves.toBeUndefined();
    await expect(call(404, { error: { status: '404', code: 'not_found' } })).rejects.toThrow('does not match docs/openapi.json');
  });

  it('runs its example against the service: creates an objective, checks in, reads the progress back', async () => {
    const t = await newTenant();
    await createPeriod(t.admin, 'Q1', '2025-01-01', '2025-03-31');
    const env = { ...process.env, GOAL_TRACKING_URL: inject('apiUrl'), GOAL_TRACKING_TOKEN: t.admin.token };
    const { stdout } = await run('node_modules/.bin/tsx', ['clients/typescript/example/objective-with-checkin.ts'], { env });
    expect(stdout.trim()).toBe('Grow weekly active teams: 25% (on_track)');
  }, 120_000);
});
