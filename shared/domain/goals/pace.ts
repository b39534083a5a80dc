import type { GoalRecord } from '#shared/domain/goals/entity.ts';

/**
 * Pace (contract 13): how far along a goal should be by today, and whether it is ahead of that.
 * Pure: the clock is an argument (`today`, a UTC date `YYYY-MM-DD`), so tests pin it.
 *
 * - `expected_progress`: 0-100, linear in days from `start_date` (0) to `end_date` (100), 0 before the start,
 *   100 on and after the end; a one-day goal (start = end) is 0 before that day and 100 from it. Rounded to 2
 *   decimals like progress.
 * - `pace`: null while `current_progress` is null; `ahead` when current >= expected + 10, `behind` when
 *   current <= expected - 10, else `on_pace`.
 */
export type Pace = 'ahead' | 'on_pace' | 'behind';
export const PACES = ['ahead', 'on_pace', 'behind'] as const;
/** Percentage points between current and expected progress that count as ahead or behind. */
export const PACE_MARGIN = 10;

const DAY_MS = 86_400_000;
const dayNumber = (date: string) => Math.floor(Date.parse(`${date.slice(0, 10)}T00:00:00Z`) / DAY_MS);
const round2 = (n: number) => Math.round(n * 100) / 100;

export function expectedProgress(goal: Pick<GoalRecord, 'start_date' | 'end_date'>, today: string): number {
  const start = dayNumber(goal.start_date);
  const end = dayNumber(goal.end_date);
  const t = dayNumber(today);
  if (t < start) return 0;
  if (t >= end) return 100;
  return round2(((t - start) * 100) / (end - start));
}

export function paceOf(current: number | null, expected: number): Pace | null {
  if (current === null || current === undefined) return null;
  if (current >= expected + PACE_MARGIN) return 'ahead';
  if (current <= expected - PACE_MARGIN) return 'behind';
  return 'on_pace';
}

/** The two fields every goal record carries. */
export function paceFields(
  goal: Pick<GoalRecord, 'start_date' | 'end_date' | 'current_progress'>,
  today: string,
): { expected_progress: number; pace: Pace | null } {
  const expected = expectedProgress(goal, today);
  return { expected_progress: expected, pace: paceOf(goal.current_progress, expected) };
}
