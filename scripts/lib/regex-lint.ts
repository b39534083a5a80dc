import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { check, type Diagnostics } from 'recheck';
// TypeScript 7 (the project's compiler) ships no compiler API: its parser comes from the typescript@5 alias
import ts from 'typescript-5';

/**
 * The ReDoS lint (`npm run lint`, docs/architecture.md "Hostile input"): every regular expression of the code
 * must match in time linear in its input, as recheck (an automaton-based checker, with a fuzzer for what the
 * automaton cannot decide) proves, or be allow-listed with a reason in scripts/regex-lint.config.ts. A regex
 * that backtracks super-linearly (`/0+$/` over an 80,000-digit number: 10 s) holds a function for its whole
 * timeout on one request.
 */

/** A regular expression of the code: a literal, or a `RegExp` built from a literal or at run time. */
export interface FoundRegex {
  file: string;
  line: number;
  /** The pattern; `undefined` when it is built at run time (no checker can read it: allow-list it). */
  source: string | undefined;
  flags: string;
  /** How the code writes it (the literal, or the constructor call's first argument). */
  text: string;
}

/** Every regex of a TypeScript or JavaScript file: `/…/` literals, `new RegExp(…)` and `RegExp(…)`, and the string a `.match`, `.matchAll` or `.search` turns into one. */
export function findRegexes(file: string, code: string): FoundRegex[] {
  const sf = ts.createSourceFile(
    file,
    code,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith('.ts') || file.endsWith('.mts') ? ts.ScriptKind.TS : ts.ScriptKind.JS,
  );
  const out: FoundRegex[] = [];
  const lineOf = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const literalText = (n: ts.Node | undefined) =>
    n && (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) ? n.text : undefined;
  const visit = (node: ts.Node) => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const text = node.getText(sf);
      const end = text.lastIndexOf('/');
      out.push({ file, line: lineOf(node), source: text.slice(1, end), flags: text.slice(end + 1), text });
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'RegExp'
    ) {
      const [pattern, flagsArg] = node.arguments ?? [];
      // RegExp(/x/, 'g') copies a literal this walk meets anyway
      if (pattern && pattern.kind !== ts.SyntaxKind.RegularExpressionLiteral) {
        const source = literalText(pattern);
        const flags = flagsArg === undefined ? '' : literalText(flagsArg);
        out.push({
          file,
          line: lineOf(node),
          source: flags === undefined ? undefined : source,
          flags: flags ?? '',
          text: pattern.getText(sf),
        });
      }
    } else if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      ['match', 'matchAll', 'search'].includes(node.expression.name.text)
    ) {
      // 'abc'.match('a+') compiles its string argument to a regex
      const source = literalText(node.arguments[0]);
      if (source !== undefined)
        out.push({
          file,
          line: lineOf(node),
          source,
          flags: node.expression.name.text === 'matchAll' ? 'g' : '',
          text: node.arguments[0]!.getText(sf),
        });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** recheck's verdict on one pattern. Generous timeout: on a busy machine a timeout would fail the lint, not pass it. */
export function checkRegex(source: string, flags: string): Promise<Diagnostics> {
  return check(source, flags, { timeout: 60_000 });
}

/** An allow-list entry: a regex the checker refuses or cannot read, kept because its input is bounded and trusted. */
export interface AllowedRegex {
  file: string;
  /** The regex's `text` (see FoundRegex), exactly. */
  text: string;
  reason: string;
}

export const LINTED_DIRS = ['shared', 'functions', 'scripts', 'infra'];
const CODE_FILE = /\.(?:ts|mts|cts|js|mjs|cjs)$/;

/** The code files under the linted folders of `root`, relative to it. */
export function codeFiles(root: string, dirs = LINTED_DIRS): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name === 'cdk.out') continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (CODE_FILE.test(e.name)) files.push(relative(root, p));
    }
  };
  for (const d of dirs) walk(join(root, d));
  return files.sort();
}

export interface LintProblem {
  regex: FoundRegex;
  problem: string;
}

/** Checks every regex of the files; the problems not allow-listed, the allow-list entries that name nothing, and how many regexes were read. */
export async function lintRegexes(
  root: string,
  files: string[],
  allowed: AllowedRegex[],
): Promise<{ problems: LintProblem[]; unusedAllowed: AllowedRegex[]; count: number }> {
  const found = files.flatMap((f) => findRegexes(f, readFileSync(join(root, f), 'utf8')));
  const verdicts = new Map<string, Promise<Diagnostics>>(); // a pattern written twice is checked once
  const verdict = (source: string, flags: string) => {
    const key = `${flags}/${source}`;
    if (!verdicts.has(key)) verdicts.set(key, checkRegex(source, flags));
    return verdicts.get(key)!;
  };
  const used = new Set<AllowedRegex>();
  const problems: LintProblem[] = [];
  for (const regex of found) {
    let problem: string | undefined;
    if (regex.source === undefined) problem = 'built at run time: no checker can read it';
    else {
      const d = await verdict(regex.source, regex.flags);
      if (d.status === 'vulnerable') problem = `${d.complexity.summary} backtracking, e.g. on ${d.attack.pattern.slice(0, 80)}`;
      else if (d.status === 'unknown')
        problem = `the checker could not decide (${d.error.kind}${'message' in d.error ? `: ${d.error.message}` : ''})`;
    }
    if (!problem) continue;
    const allow = allowed.find((a) => a.file === regex.file && a.text === regex.text);
    if (allow) used.add(allow);
    else problems.push({ regex, problem });
  }
  return { problems, unusedAllowed: allowed.filter((a) => !used.has(a)), count: found.length };
}
