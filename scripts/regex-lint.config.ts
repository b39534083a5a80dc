import type { AllowedRegex } from './lib/regex-lint.ts';

/**
 * Regexes the ReDoS lint (`npm run lint`, scripts/lib/regex-lint.ts) lets through although the checker refuses
 * or cannot read them. Only for a regex whose input is bounded and trusted, each with its reason; an entry
 * that names no regex any more fails the lint, so the list cannot outlive what it excuses.
 */
export const ALLOWED_REGEXES: AllowedRegex[] = [
  {
    file: 'scripts/lib/local-stack.ts',
    text: '`^${pattern}$`',
    reason:
      "Built from the route table's own paths (constants of the repo, not input): literal segments escaped, each {param} " +
      'becomes ([^/]+) between literal slashes, anchored at both ends, so no character can be read by two parts: linear. Local stack only.',
  },
];
