import { describe, expect, it } from 'vitest';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import { historyPoint } from '#shared/domain/history/cause.ts';

const T0 = '2026-02-01T10:00:00.000Z';
const T1 = '2026-02-02T10:00:00.000Z';
const goal = (over: Partial<GoalRecord> = {}): GoalRecord =>
  ({
    uuid: 'g',
    type: 'key_result',
    title: 'G',
    start_date: '2026-01-01',
    end_date: '2026-03-31',
    metric: { uuid: 'm', name: null, start_value: 0, target_value: 200, unit: null, metric_type: 'reach' },
    progress_mode: 'manual',
    current_value: null,
    current_progress: null,
    current_status: 'not_started',
    last_checkin_date: null,
    value_updated_at: null,
    updated_at: T0,
    ...over,
  }) as GoalRecord;

const checkedIn = (value: number, at: string, over: Partial<GoalRecord> = {}) =>
  goal({
    current_value: value,
    current_progress: value / 2,
    current_status: 'on_track',
    last_checkin_date: at.slice(0, 10),
    value_updated_at: at,
    updated_at: at,
    ...over,
  });

describe('historyPoint', () => {
  it('is a point only when value, progress or status moved', () => {
    expect(historyPoint(goal(), goal({ title: 'renamed', updated_at: T1 }), T1)).toBeUndefined();
    expect(historyPoint(checkedIn(50, T0), checkedIn(50, T0), T1)).toBeUndefined();
    expect(historyPoint(undefined, goal(), T1)).toBeUndefined();
    expect(historyPoint(goal(), undefined, T1)).toBeUndefined();
  });

  it('records the goal after the change, at the write time', () => {
    expect(historyPoint(goal(), checkedIn(50, T1), 'stream-time')).toEqual({
      at: T1,
      value: 50,
      progress: 25,
      status: 'on_track',
      cause: 'checkin',
    });
  });

  it('takes the cause from a marker written with this very write', () => {
    const marked = checkedIn(80, T1, { progress_cause: { cause: 'checkin_updated', at: T1 } } as Partial<GoalRecord>);
    expect(historyPoint(checkedIn(50, T0), marked, T1)?.cause).toBe('checkin_updated');
  });

  it('ignores a marker left over from an earlier write', () => {
    const stale = goal({
      progress_mode: 'rollup',
      current_progress: 40,
      updated_at: T1,
      progress_cause: { cause: 'metric_changed', at: T0 },
    } as Partial<GoalRecord>);
    expect(historyPoint(goal({ progress_mode: 'rollup', current_progress: 10 }), stale, T1)?.cause).toBe('rollup');
  });

  it('derives without a marker: metric change, leaving rollup, rollup, deleted check-in', () => {
    const before = checkedIn(50, T0);
    expect(
      historyPoint(before, { ...before, metric: { ...before.metric!, target_value: 100 }, current_progress: 50, updated_at: T1 }, T1)
        ?.cause,
    ).toBe('metric_changed');
    expect(historyPoint({ ...before, progress_mode: 'rollup', current_progress: 90 }, { ...before, updated_at: T1 }, T1)?.cause).toBe(
      'metric_changed',
    );
    expect(
      historyPoint(
        goal({ progress_mode: 'rollup', current_progress: 10 }),
        goal({ progress_mode: 'rollup', current_progress: 30, updated_at: T1 }),
        T1,
      )?.cause,
    ).toBe('rollup');
    // the goal follows an older check-in: its value time is older than the write
    expect(historyPoint(checkedIn(80, T0), { ...checkedIn(50, T0), updated_at: T1 }, T1)?.cause).toBe('checkin_deleted');
    expect(historyPoint(checkedIn(80, T0), goal({ updated_at: T1 }), T1)).toEqual({
      at: T1,
      value: null,
      progress: null,
      status: 'not_started',
      cause: 'checkin_deleted',
    });
  });

  it('a status set by a goal update (no check-in) is none of the causes and not a point', () => {
    expect(historyPoint(checkedIn(50, T0), { ...checkedIn(50, T0), current_status: 'at_risk', updated_at: T1 }, T1)).toBeUndefined();
  });
});
