import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'pure-core-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every module URL (with its importer) a fresh node process resolves while importing `files`. */
function modulesLoadedBy(files: string[]): Array<{ url: string; parent: string }> {
  const log = join(dir, `${files.length}-${Date.now()}.log`);
  const script = `for (const f of JSON.parse(process.env.PURE_CORE_FILES)) await import(f);`;
  execFileSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--import',
      pathToFileURL(join(import.meta.dirname, 'support/record-modules.mjs')).href,
      '--input-type=module',
      '-e',
      script,
    ],
    {
      cwd: root,
      env: { ...process.env, RECORD_MODULES_TO: log, PURE_CORE_FILES: JSON.stringify(files.map((f) => pathToFileURL(f).href)) },
      stdio: 'pipe',
    },
  );
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [url, parent] = line.split('\t');
      return { url: url!, parent: parent ?? '' };
    });
}

const rel = (url: string) => (url.startsWith('file:') ? relative(root, new URL(url).pathname) : url);

describe('the pure core loads no AWS SDK', () => {
  // Domain decisions and entity definitions are pure: a test (or a script) of them must not pay for the SDK.
  it('every shared/domain/**/decide*.ts and entity.ts, goals/rules.ts and goals/refusals.ts, imports without loading @aws-sdk/', () => {
    const domain = join(root, 'shared/domain');
    const files = (readdirSync(domain, { recursive: true }) as string[])
      .filter((f) => /(^|\/)(decide[^/]*|entity)\.ts$|^goals\/(rules|refusals)\.ts$/.test(f))
      .map((f) => join(domain, f));
    expect(files.length).toBeGreaterThan(10);
    const loaded = modulesLoadedBy(files);
    expect(loaded.some((m) => rel(m.url) === 'shared/domain/goals/entity.ts')).toBe(true); // the hook saw the imports
    expect(loaded.filter((m) => m.url.includes('/@aws-sdk/')).map((m) => `${rel(m.parent)} -> ${rel(m.url)}`)).toEqual([]);
  }, 60_000);

  it('the entity model (shared/db/model.ts) loads neither @aws-sdk/ nor the configuration', () => {
    const loaded = modulesLoadedBy([join(root, 'shared/db/model.ts')]).map((m) => rel(m.url));
    expect(loaded).toContain('shared/db/model.ts');
    expect(loaded.filter((u) => u.includes('/@aws-sdk/') || u === 'shared/config.ts')).toEqual([]);
  }, 60_000);

  // A module in a runtime cycle can be read before it has run (its exports still undefined): none in the request path.
  it('the request path (shared/http/api.ts, shared/db/client.ts) imports no module cycle', () => {
    const edges = new Map<string, Set<string>>();
    for (const { url, parent } of modulesLoadedBy([join(root, 'shared/db/client.ts'), join(root, 'shared/http/api.ts')])) {
      if (!url.startsWith(pathToFileURL(root).href) || !parent.startsWith('file:')) continue;
      edges.set(rel(parent), (edges.get(rel(parent)) ?? new Set()).add(rel(url)));
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const path: string[] = [];
    const visit = (n: string) => {
      state.set(n, 'open');
      path.push(n);
      for (const m of edges.get(n) ?? []) {
        if (state.get(m) === 'open') cycles.push([...path.slice(path.indexOf(m)), m].join(' -> '));
        else if (!state.has(m)) visit(m);
      }
      path.pop();
      state.set(n, 'done');
    };
    for (const n of edges.keys()) if (!state.has(n)) visit(n);
    expect(edges.get('shared/db/client.ts')?.size).toBeGreaterThan(0);
    expect(cycles).toEqual([]);
  }, 60_000);
});
