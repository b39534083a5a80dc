import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, operationId } from '#shared/openapi.ts';
import { routes } from '#shared/routes/index.ts';

const run = promisify(execFile);

type Operation = { operationId?: string; responses: Record<string, unknown> };

describe('OpenAPI document lint', () => {
  const doc = buildOpenApiDocument() as unknown as { paths: Record<string, Record<string, Operation>> };

  it("passes Redocly's recommended ruleset (redocly.yaml) with no error and no warning", async () => {
    // Offline and quiet: no telemetry, no update check (the machines reach the npm registry only).
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    const { stdout } = await run('node_modules/.bin/redocly', ['lint', 'docs/openapi.json', '--format=json'], {
      env,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { stdout: string }) => err);
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; message: string }>;
    };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it('names every operation after its route, uniquely, and documents a 4xx answer for each', () => {
    const ids = new Set<string>();
    for (const r of routes) {
      const op = doc.paths[r.path]![r.method.toLowerCase()]!;
      expect(op.operationId, `${r.method} ${r.path}`).toBe(operationId(r));
      expect(op.operationId).toMatch(/^[a-z][A-Za-z0-9]*$/); // a method name in any generated client
      ids.add(op.operationId!);
      expect(
        Object.keys(op.responses).some((s) => /^4\d\d$/.test(s)),
        `${r.method} ${r.path} has a 4xx`,
      ).toBe(true);
    }
    expect(ids.size).toBe(routes.length);
    expect(operationId({ method: 'GET', path: '/rest/v2/objectives/{id}' })).toBe('getRestV2ObjectivesId');
    expect(operationId({ method: 'POST', path: '/okrs-dashboards/{shareable_uuid}/access_requests/resend' })).toBe(
      'postOkrsDashboardsShareableUuidAccessRequestsResend',
    );
  });
});
