import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeFiles, LINTED_DIRS, lintRegexes } from './lib/regex-lint.ts';
import { ALLOWED_REGEXES } from './regex-lint.config.ts';

// `npm run lint`: the ReDoS lint over every regex of the code (scripts/lib/regex-lint.ts); exit 1 on a problem.
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = codeFiles(root);
const { problems, unusedAllowed, count } = await lintRegexes(root, files, ALLOWED_REGEXES);
for (const { regex, problem } of problems) console.error(`${regex.file}:${regex.line}: ${regex.text.slice(0, 120)}: ${problem}`);
for (const a of unusedAllowed)
  console.error(`scripts/regex-lint.config.ts: the allowed ${a.file} ${a.text.slice(0, 80)} names no regex any more: remove it`);
if (problems.length || unusedAllowed.length) {
  console.error(
    `regex lint: ${problems.length + unusedAllowed.length} problem(s) in ${count} regexes (${LINTED_DIRS.join('/, ')}/): make each linear (docs/architecture.md, "Hostile input")`,
  );
  process.exit(1);
}
console.log(
  `regex lint: ${count} regexes in ${files.length} files (${LINTED_DIRS.join('/, ')}/), every one linear or allow-listed (${ALLOWED_REGEXES.length})`,
);
