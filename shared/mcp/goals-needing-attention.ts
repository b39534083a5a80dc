import * as z from 'zod';
import { GOAL_KINDS } from '#shared/domain/goals/entity.ts';
import { presentGoals } from '#shared/presenters/goals.ts';
import { GoalRecordSchema } from '#shared/schemas/goals.ts';
import { todayUtc } from '#shared/clock.ts';
import { GOALS_READ, tool, type McpTool } from '#shared/mcp/tool.ts';
import { allGoals } from '#shared/mcp/goal-tools.ts';
import { uuid } from '#shared/mcp/tool-args.ts';

/** goals_needing_attention: the visible open goals behind pace or without a recent check-in, worst first, each with its reasons. */

/** Days without a check-in (since the last one, or since its creation for a goal never checked in) that make a goal stale. */
export const STALE_DAYS = 14;

/** What the rule reads of a presented goal (shared/presenters/goals.ts: pace and expected_progress as of `today`). */
export interface AttentionGoal {
  uuid: string;
  title: string;
  pace: 'ahead' | 'on_pace' | 'behind' | null;
  expected_progress: number;
  current_progress: number | null;
  last_checkin_date: string | null;
  created_at: string;
}

export interface Attention<G> {
  record: G;
  reasons: Array<{ code: 'behind_pace' | 'no_recent_checkin'; message: string }>;
  progress_gap: number;
  days_without_checkin: number | null;
}

const dayNumber = (d: string) => Date.parse(`${d.slice(0, 10)}T00:00:00Z`) / 86_400_000;

/**
 * The goals of `goals` that need attention on `today` (UTC `YYYY-MM-DD`), worst first: behind pace (the
 * presenter's `pace`: progress at least 10 points under `expected_progress`), or no check-in for STALE_DAYS days
 * or more (since `last_checkin_date`, or `created_at` for a goal never checked in). Worst: the largest
 * `progress_gap` (expected - current, 0 unless behind), then the most days without a check-in (counted only when
 * stale), then by title, then by uuid. Pure: the clock is an argument.
 */
export function needingAttention<G extends AttentionGoal>(goals: G[], today: string): Array<Attention<G>> {
  const out = goals.flatMap((g) => {
    const reasons: Attention<G>['reasons'] = [];
    const gap = g.pace === 'behind' ? Math.round((g.expected_progress - (g.current_progress ?? 0)) * 100) / 100 : 0;
    if (g.pace === 'behind')
      reasons.push({
        code: 'behind_pace',
        message: `Progress is ${g.current_progress}%, but ${g.expected_progress}% was expected by today`,
      });
    const days = Math.floor(dayNumber(today) - dayNumber(g.last_checkin_date ?? g.created_at));
    if (days >= STALE_DAYS)
      reasons.push({
        code: 'no_recent_checkin',
        message: g.last_checkin_date
          ? `No check-in for ${days} days (last on ${g.last_checkin_date})`
          : `Never checked in, created ${days} days ago`,
      });
    if (!reasons.length) return [];
    return [
      {
        record: g,
        reasons,
        progress_gap: gap,
        days_without_checkin: g.last_checkin_date ? days : null,
        stale: days >= STALE_DAYS ? days : 0,
      },
    ];
  });
  out.sort(
    (x, y) =>
      y.progress_gap - x.progress_gap ||
      y.stale - x.stale ||
      x.record.title.localeCompare(y.record.title) ||
      (x.record.uuid < y.record.uuid ? -1 : x.record.uuid > y.record.uuid ? 1 : 0),
  );
  return out.map(({ stale: _, ...g }) => g);
}

export const GOALS_NEEDING_ATTENTION: McpTool = tool({
  name: 'goals_needing_attention',
  title: 'Goals needing attention',
  description:
    'The goals the user can see that are behind pace (progress at least 10 points under where it should be by today) or have had no check-in for 14 days, worst first, each with the reasons. Closed and postponed goals are left out. Use it for "what is behind, and why?".',
  scope: GOALS_READ,
  readOnly: true,
  args: z.strictObject({
    time_period_uuid: uuid.optional().meta({ description: 'Only goals of this time period (see list_time_periods).' }),
  }),
  result: z.object({
    goals: z.array(
      z.object({
        record: GoalRecordSchema,
        reasons: z.array(z.object({ code: z.enum(['behind_pace', 'no_recent_checkin']), message: z.string() })),
        progress_gap: z.number().meta({ description: 'expected_progress - current_progress, in points (0 unless behind pace).' }),
        days_without_checkin: z.number().nullable(),
      }),
    ),
  }),
  run: async (ctx, a) => {
    const pairs: Array<[string, string]> = [
      ['q[current_status_not_in][]', 'closed'],
      ['q[current_status_not_in][]', 'postponed'],
    ];
    if (a.time_period_uuid) pairs.push(['q[time_period_uuid_eq]', a.time_period_uuid]);
    const goals = (await Promise.all(GOAL_KINDS.map((k) => allGoals(ctx, k, pairs)))).flat();
    const today = todayUtc();
    return { goals: needingAttention(await presentGoals(ctx, goals, today), today) };
  },
  summary: (r) =>
    r.goals.length
      ? `${r.goals.length} goal(s) need attention: ${r.goals.map((g) => `${g.record.title}: ${g.reasons.map((x) => x.message).join('; ')}`).join(' | ')}`
      : 'No goal needs attention',
});
