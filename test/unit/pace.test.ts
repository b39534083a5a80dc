import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { expectedProgress, paceFields, paceOf } from '#shared/domain/goals/pace.ts';
import { todayUtc } from '#shared/clock.ts';

const q = { start_date: '2026-01-01', end_date: '2026-04-01' }; // 90 days

describe('expectedProgress', () => {
  it('is 0 before and on the start, 100 on and after the end', () => {
    expect(expectedProgress(q, '2025-12-01')).toBe(0);
    expect(expectedProgress(q, '2026-01-01')).toBe(0);
    expect(expectedProgress(q, '2026-04-01')).toBe(100);
    expect(expectedProgress(q, '2027-01-01')).toBe(100);
  });

  it('is linear in days between, rounded to 2 decimals', () => {
    expect(expectedProgress(q, '2026-02-15')).toBe(50); // day 45 of 90
    expect(expectedProgress(q, '2026-01-31')).toBe(33.33); // day 30 of 90
    expect(expectedProgress({ start_date: '2026-01-01', end_date: '2026-01-03' }, '2026-01-02')).toBe(50);
  });

  it('a one-day goal is 0 before its day and 100 from it', () => {
    const d = { start_date: '2026-03-03', end_date: '2026-03-03' };
    expect(expectedProgress(d, '2026-03-02')).toBe(0);
    expect(expectedProgress(d, '2026-03-03')).toBe(100);
  });

  it('stays within 0..100 and never decreases as days pass', () => {
    const day = fc.integer({ min: 0, max: 2000 }).map((n) => new Date(Date.UTC(2025, 0, 1) + n * 86_400_000).toISOString().slice(0, 10));
    fc.assert(
      fc.property(day, day, day, day, (a, b, t1, t2) => {
        const g = a <= b ? { start_date: a, end_date: b } : { start_date: b, end_date: a };
        // biome-ignore lint/complexity/useMathMinMax: the days are ISO date strings, not numbers
        const [e1, e2] = [expectedProgress(g, t1 < t2 ? t1 : t2), expectedProgress(g, t1 < t2 ? t2 : t1)];
        return e1 >= 0 && e2 <= 100 && e1 <= e2;
      }),
    );
  });
});

describe('paceOf', () => {
  it('is null without progress', () => {
    expect(paceOf(null, 40)).toBeNull();
  });

  it('ahead from expected + 10, behind from expected - 10, on pace between (boundaries included)', () => {
    expect(paceOf(60, 50)).toBe('ahead');
    expect(paceOf(59.99, 50)).toBe('on_pace');
    expect(paceOf(50, 50)).toBe('on_pace');
    expect(paceOf(40.01, 50)).toBe('on_pace');
    expect(paceOf(40, 50)).toBe('behind');
    expect(paceOf(0, 100)).toBe('behind');
    expect(paceOf(0, 0)).toBe('on_pace');
    expect(paceOf(100, 100)).toBe('on_pace');
  });
});

describe('paceFields', () => {
  it('reads the goal at the pinned clock', () => {
    expect(paceFields({ ...q, current_progress: 80 }, '2026-02-15')).toEqual({ expected_progress: 50, pace: 'ahead' });
    expect(paceFields({ ...q, current_progress: 20 }, '2026-02-15')).toEqual({ expected_progress: 50, pace: 'behind' });
    expect(paceFields({ ...q, current_progress: null }, '2026-02-15')).toEqual({ expected_progress: 50, pace: null });
  });

  it('todayUtc is the UTC date of the clock', () => {
    expect(todayUtc(new Date('2026-05-31T23:59:59-02:00'))).toBe('2026-06-01');
  });
});
