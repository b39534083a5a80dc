import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRegex, codeFiles, findRegexes, lintRegexes } from '../../scripts/lib/regex-lint.ts';

/** The ReDoS lint (`npm run lint`, docs/architecture.md "Hostile input"): what it reads, and what it refuses. */
describe('regex lint', () => {
  it('refuses the quadratic /0+$/ that trimmed number digits, and passes the linear forms', async () => {
    const old = await checkRegex('0+$', '');
    expect(old).toMatchObject({ status: 'vulnerable', complexity: { type: 'polynomial', degree: 2 } });
    for (const [source, flags] of [
      ['^0+', ''],
      ['^(-?)(\\d+)(?:\\.(\\d+))?(?:[eE]([+-]?\\d+))?$', ''],
      ['^[^@\\s]+@[^@\\s.]+(?:\\.[^@\\s.]+)+$', ''],
    ]) {
      expect((await checkRegex(source!, flags!)).status, source).toBe('safe');
    }
    expect(await checkRegex('(a+)+$', '')).toMatchObject({ status: 'vulnerable', complexity: { type: 'exponential' } });
  });

  it('finds regex literals, RegExp built from literals, strings given to match/search, and RegExp built at run time', () => {
    const code = [
      'const a = /0+$/;',
      "const b = new RegExp('x+y', 'i');",
      'const c = RegExp(`^z$`);',
      "const d = s.match('q+$');",
      'const e = new RegExp(`^${p}$`);',
      "const f = new RegExp('k', flags);",
      "const g = new RegExp(/copied/, 'g');",
      "const h = s.replace('not a regex', '');",
      "const i = '/not/ a regex';",
    ].join('\n');
    expect(findRegexes('x.ts', code).map(({ line, source, flags }) => ({ line, source, flags }))).toEqual([
      { line: 1, source: '0+$', flags: '' },
      { line: 2, source: 'x+y', flags: 'i' },
      { line: 3, source: '^z$', flags: '' },
      { line: 4, source: 'q+$', flags: '' },
      { line: 5, source: undefined, flags: '' },
      { line: 6, source: undefined, flags: '' },
      { line: 7, source: 'copied', flags: '' }, // the literal, as written
    ]);
  });

  describe('over a tree', () => {
    const root = mkdtempSync(join(tmpdir(), 'regex-lint-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    mkdirSync(join(root, 'shared', 'node_modules'), { recursive: true });
    writeFileSync(
      join(root, 'shared', 'trim.ts'),
      "export const trim = (s: string) => s.replace(/0+$/, '');\nexport const ok = /^\\d+$/;\n",
    );
    writeFileSync(join(root, 'shared', 'built.ts'), 'export const r = (p: string) => new RegExp(`^${p}$`);\n');
    writeFileSync(join(root, 'shared', 'node_modules', 'dep.js'), 'module.exports = /(a+)+$/;\n');

    it('reports each refused or unreadable regex with its place, skipping node_modules', async () => {
      const files = codeFiles(root, ['shared']);
      expect(files).toEqual(['shared/built.ts', 'shared/trim.ts']);
      const { problems, unusedAllowed, count } = await lintRegexes(root, files, []);
      expect(count).toBe(3);
      expect(unusedAllowed).toEqual([]);
      expect(problems.map((p) => `${p.regex.file}:${p.regex.line} ${p.regex.text}`)).toEqual([
        'shared/built.ts:1 `^${p}$`',
        'shared/trim.ts:1 /0+$/',
      ]);
      expect(problems[1]!.problem).toMatch(/^2nd degree polynomial backtracking/);
    });

    it('lets an allow-listed regex through, and refuses an allow-list entry that names nothing', async () => {
      const allowed = [
        { file: 'shared/built.ts', text: '`^${p}$`', reason: 'test' },
        { file: 'shared/gone.ts', text: '/x/', reason: 'test' },
      ];
      const { problems, unusedAllowed } = await lintRegexes(root, codeFiles(root, ['shared']), allowed);
      expect(problems.map((p) => p.regex.file)).toEqual(['shared/trim.ts']);
      expect(unusedAllowed).toEqual([allowed[1]]);
    });
  });
});
