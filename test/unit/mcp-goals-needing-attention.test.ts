import { describe, expect, it } from 'vitest';
import { type AttentionGoal, needingAttention, STALE_DAYS } from '#shared/mcp/goals-needing-attention.ts';

/** The rule of goals_needing_attention (contract section 15) on a pinned day: exact membership, reasons and order. */
const TODAY = '2026-06-15';

const goal = (uuid: string, title: string, over: Partial<AttentionGoal> = {}): AttentionGoal => ({
  uuid,
  title,
  pace: 'on_pace',
  expected_progress: 50,
  current_progress: 50,
  last_checkin_date: TODAY,
  created_at: '2026-01-10T08:00:00.000Z',
  ...over,
});

const behind = (expected: number, current: number): Partial<AttentionGoal> => ({
  pace: 'behind',
  expected_progress: expected,
  current_progress: current,
});

describe('goals_needing_attention: which goals, why, worst first', () => {
  it('takes the goals behind pace or without a check-in for 14 days, and only those', () => {
    expect(STALE_DAYS).toBe(14);
    const goals = [
      goal('u-on-pace', 'On pace, checked in today'),
      goal('u-ahead', 'Ahead', { pace: 'ahead', current_progress: 80 }),
      goal('u-13', 'Last check-in 13 days ago', { last_checkin_date: '2026-06-02' }),
      goal('u-14', 'Last check-in 14 days ago', { last_checkin_date: '2026-06-01' }),
      goal('u-never-13', 'Never checked in, created 13 days ago', {
        pace: null,
        current_progress: null,
        last_checkin_date: null,
        created_at: '2026-06-02T23:59:59.999Z',
      }),
      goal('u-never-45', 'Never checked in, created 45 days ago', {
        pace: null,
        current_progress: null,
        last_checkin_date: null,
        created_at: '2026-05-01T00:00:00.000Z',
      }),
      goal('u-behind', 'Behind', behind(50, 10)),
      goal('u-behind-stale', 'Behind and stale', { ...behind(50, 10), last_checkin_date: '2026-05-16' }),
      goal('u-behind-little', 'Behind a little', behind(50, 40)),
      goal('u-behind-third', 'Behind by a third', behind(33.33, 10)),
      goal('u-near', 'Nine points under: on pace', { expected_progress: 50, current_progress: 41 }),
    ];
    expect(needingAttention(goals, TODAY)).toEqual([
      {
        record: goals[7],
        reasons: [
          { code: 'behind_pace', message: 'Progress is 10%, but 50% was expected by today' },
          { code: 'no_recent_checkin', message: 'No check-in for 30 days (last on 2026-05-16)' },
        ],
        progress_gap: 40,
        days_without_checkin: 30,
      },
      {
        record: goals[6],
        reasons: [{ code: 'behind_pace', message: 'Progress is 10%, but 50% was expected by today' }],
        progress_gap: 40,
        days_without_checkin: 0,
      },
      {
        record: goals[9],
        reasons: [{ code: 'behind_pace', message: 'Progress is 10%, but 33.33% was expected by today' }],
        progress_gap: 23.33,
        days_without_checkin: 0,
      },
      {
        record: goals[8],
        reasons: [{ code: 'behind_pace', message: 'Progress is 40%, but 50% was expected by today' }],
        progress_gap: 10,
        days_without_checkin: 0,
      },
      {
        record: goals[5],
        reasons: [{ code: 'no_recent_checkin', message: 'Never checked in, created 45 days ago' }],
        progress_gap: 0,
        days_without_checkin: null,
      },
      {
        record: goals[3],
        reasons: [{ code: 'no_recent_checkin', message: 'No check-in for 14 days (last on 2026-06-01)' }],
        progress_gap: 0,
        days_without_checkin: 14,
      },
    ]);
  });

  it('orders the stale by days without a check-in, then by title, then by uuid; an empty list when none', () => {
    const stale = (uuid: string, title: string, last: string) => goal(uuid, title, { last_checkin_date: last });
    const goals = [
      stale('u-3', 'Same', '2026-05-20'),
      stale('u-1', 'Same', '2026-05-20'),
      stale('u-beta', 'Beta', '2026-05-20'),
      stale('u-alpha', 'alpha', '2026-05-20'),
      stale('u-longer', 'Zulu', '2026-05-01'),
      stale('u-2', 'Same', '2026-05-20'),
    ];
    expect(needingAttention(goals, TODAY).map((a) => a.record.uuid)).toEqual(['u-longer', 'u-alpha', 'u-beta', 'u-1', 'u-2', 'u-3']);
    expect(needingAttention([goal('u', 'Fine')], TODAY)).toEqual([]);
  });
});
