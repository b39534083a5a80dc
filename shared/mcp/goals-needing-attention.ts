import * as z from 'zod';
import { GOAL_KINDS } from '#shared/domain/goals/entity.ts';
import { presentGoals } from '#shared/presenters/goals.ts';
import { GoalRecordSchema } from '#shared/schemas/goals.ts';
import { todayUtc } from '#shared/clock.ts';
import { GOALS_READ, tool, type McpTool } from '#shared/mcp/tool.ts';
import { allGoals } from '#shared/mcp/goal-tools.ts';
import { uuid } from '#shared/mcp/tool-args.ts';

/** goals_needing_attention: the visible open goals behind pace or without a recent check-in, worst first, each with its reasons. */

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
    const day = (d: string) => Date.parse(`${d.slice(0, 10)}T00:00:00Z`) / 86_400_000;
    const presented = await presentGoals(ctx, goals, today);
    const out = presented.flatMap((g) => {
      const reasons: Array<{ code: 'behind_pace' | 'no_recent_checkin'; message: string }> = [];
      const gap = g.pace === 'behind' ? Math.round((g.expected_progress - (g.current_progress ?? 0)) * 100) / 100 : 0;
      if (g.pace === 'behind')
        reasons.push({
          code: 'behind_pace',
          message: `Progress is ${g.current_progress}%, but ${g.expected_progress}% was expected by today`,
        });
      const since = g.last_checkin_date ?? g.created_at;
      const days = Math.floor(day(today) - day(since));
      if (days >= 14)
        reasons.push({
          code: 'no_recent_checkin',
          message: g.last_checkin_date
            ? `No check-in for ${days} days (last on ${g.last_checkin_date})`
            : `Never checked in, created ${days} days ago`,
        });
      return reasons.length
        ? [
            {
              record: g,
              reasons,
              progress_gap: gap,
              days_without_checkin: g.last_checkin_date ? days : null,
              stale: days >= 14 ? days : 0,
            },
          ]
        : [];
    });
    // worst first: the furthest behind pace, then the longest without a check-in
    out.sort((x, y) => y.progress_gap - x.progress_gap || y.stale - x.stale || x.record.title.localeCompare(y.record.title));
    return { goals: out.map(({ stale: _, ...g }) => g) };
  },
  summary: (r) =>
    r.goals.length
      ? `${r.goals.length} goal(s) need attention: ${r.goals.map((g) => `${g.record.title}: ${g.reasons.map((x) => x.message).join('; ')}`).join(' | ')}`
      : 'No goal needs attention',
});
