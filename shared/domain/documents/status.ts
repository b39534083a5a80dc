import { SKILL_STATUSES, SUMMARY_MAX_LENGTH, type RefreshState, type SkillStatus } from '#shared/domain/documents/entity.ts';

/** How a run ended, as stored on the thread. */
export interface RefreshOutcome {
  state: Exclude<RefreshState, 'running'>;
  skill_status: SkillStatus | null;
  summary: string;
}

/** Collapses any text to one line (newlines and runs of whitespace become one space) of at most `max` characters. */
export function oneLine(text: string, max = SUMMARY_MAX_LENGTH): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

// `STATUS: completed`, tolerating what models wrap around it: markdown emphasis or code marks, a final period.
// The code is letters joined by single underscores, so no character can be read by two neighbouring parts
// (`[a-z_]+` beside `[\s*_`.]*` backtracked cubically over a run of underscores: npm run lint).
const STATUS_LINE = /^[\s*_`>#-]*status[\s*_`]*:[\s*_`]*([a-z]+(?:_[a-z]+)*)[\s*_`.]*$/i;

/**
 * Reads the agent's output: its last non-blank line is the terminal status code. A recognized success code
 * ends the run `completed`, `failed` ends it `failed`; anything else (no status line, an unknown code) is
 * `completed_unknown_outcome` with the whole output as the summary, verbatim but on one line, so callers
 * can show what the agent said without assuming success (spec: States and transitions).
 */
export function parseAgentOutput(output: string): RefreshOutcome {
  const lines = output.split(/\r?\n/);
  let last = lines.length - 1;
  while (last >= 0 && lines[last]!.trim() === '') last--;
  const code = last >= 0 ? STATUS_LINE.exec(lines[last]!)?.[1]?.toLowerCase() : undefined;
  const skill = SKILL_STATUSES.find((s) => s === code);
  if (!skill)
    return { state: 'completed_unknown_outcome', skill_status: null, summary: oneLine(output) || 'The refresh agent returned no output' };
  const report = oneLine(lines.slice(0, last).join('\n'));
  return { state: skill === 'failed' ? 'failed' : 'completed', skill_status: skill, summary: report || DEFAULT_SUMMARY[skill] };
}

/** Said when the agent gave a status code but no report. */
const DEFAULT_SUMMARY: Record<SkillStatus, string> = {
  completed: 'The document was refreshed',
  completed_no_changes: 'The document was already up to date',
  completed_locked: 'The document is locked; it was not changed',
  failed: 'The refresh agent reported a failure',
};
