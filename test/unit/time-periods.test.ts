import { describe, expect, it } from 'vitest';
import { decided } from '#shared/decision.ts';
import {
  decideUpdateTimePeriodWithin,
  goalsOutsideRefusal,
  narrowsRange,
  periodInUse,
  decideCreateTimePeriod,
  decideDeleteTimePeriod,
  decideUpdateTimePeriod,
} from '#shared/domain/time-periods/decide.ts';
import { ForbiddenError, HasDependentsError } from '#shared/errors.ts';
import { callerAs, LATER, NOW, refusal } from './directory.fixture.ts';

const admin = callerAs('admin');
const q1 = { name: 'Q1', start_date: '2025-01-01', end_date: '2025-03-31' };
const period = decided(decideCreateTimePeriod(admin, q1, NOW, 'p-1'));

describe('time period decisions', () => {
  it('creates with every field from the command, the clock and the id given', () => {
    expect(period).toEqual({ uuid: 'p-1', ...q1, creator_uuid: admin.userId, created_at: NOW, updated_at: NOW });
  });

  it('lets only admins write', () => {
    for (const role of ['member', 'viewer'] as const) {
      expect(refusal(() => decideCreateTimePeriod(callerAs(role), q1, NOW, 'x'))).toBeInstanceOf(ForbiddenError);
      expect(refusal(() => decideUpdateTimePeriod(callerAs(role), period, { name: 'x' }, NOW))).toBeInstanceOf(ForbiddenError);
      expect(refusal(() => decideDeleteTimePeriod(callerAs(role), period))).toBeInstanceOf(ForbiddenError);
    }
  });

  it('refuses dates out of order naming only the date fields sent; a one-day period is fine', () => {
    expect(refusal(() => decideCreateTimePeriod(admin, { ...q1, end_date: '2024-12-31' }, NOW, 'x')).details.map((d) => d.field)).toEqual([
      'start_date',
      'end_date',
    ]);
    expect(refusal(() => decideUpdateTimePeriod(admin, period, { start_date: '2025-04-01' }, NOW)).details).toEqual([
      expect.objectContaining({ field: 'start_date', code: 'out_of_order' }),
    ]);
    expect(decided(decideCreateTimePeriod(admin, { ...q1, end_date: q1.start_date }, NOW, 'x')).end_date).toBe(q1.start_date);
  });

  it('says when an update narrows the range (the goals must then be checked); widening does not', () => {
    expect(decided(decideUpdateTimePeriod(admin, period, { end_date: '2025-04-30' }, LATER))).toEqual({
      next: { ...period, end_date: '2025-04-30', updated_at: LATER },
      narrows: false,
    });
    expect(decided(decideUpdateTimePeriod(admin, period, { name: 'renamed' }, LATER)).narrows).toBe(false);
    expect(decided(decideUpdateTimePeriod(admin, period, { start_date: '2025-01-02' }, LATER)).narrows).toBe(true);
    expect(decided(decideUpdateTimePeriod(admin, period, { end_date: '2025-03-30' }, LATER)).narrows).toBe(true);
    // the read step's rule (whether to read the goals) is the same
    for (const cmd of [{ end_date: '2025-04-30' }, { name: 'renamed' }, { start_date: '2025-01-02' }, { end_date: '2025-03-30' }])
      expect(narrowsRange(period, cmd)).toBe(decided(decideUpdateTimePeriod(admin, period, cmd, LATER)).narrows);
  });

  it('refuses new dates that strand a goal, naming the side that would', () => {
    const { next } = decided(decideUpdateTimePeriod(admin, period, { start_date: '2025-02-01', end_date: '2025-02-28' }, LATER));
    expect(goalsOutsideRefusal(next, [{ uuid: 'g-in', start_date: '2025-02-01', end_date: '2025-02-28' }])).toBeUndefined();
    expect(
      decided(
        decideUpdateTimePeriodWithin(
          admin,
          period,
          { start_date: '2025-02-01', end_date: '2025-02-28' },
          [{ uuid: 'g-in', start_date: '2025-02-01', end_date: '2025-02-28' }],
          LATER,
        ),
      ),
    ).toEqual(next);
    const err = refusal(() =>
      decideUpdateTimePeriodWithin(
        admin,
        period,
        { start_date: '2025-02-01', end_date: '2025-02-28' },
        [
          { uuid: 'g-early', start_date: '2025-01-15', end_date: '2025-02-10' },
          { uuid: 'g-late', start_date: '2025-02-10', end_date: '2025-03-15' },
        ],
        LATER,
      ),
    );
    expect(err.details).toEqual([
      expect.objectContaining({ field: 'start_date', code: 'goals_out_of_range', message: expect.stringContaining('g-early') }),
      expect.objectContaining({ field: 'end_date', code: 'goals_out_of_range', message: expect.stringContaining('g-late') }),
    ]);
  });

  it('refuses a delete while goals use the period, counting them per kind', () => {
    expect(
      periodInUse([
        ['objective', 0],
        ['key_result', 0],
      ]),
    ).toBeUndefined();
    const err = periodInUse([
      ['objective', 2],
      ['key_result', 0],
      ['initiative', 1],
    ])!;
    expect(err).toBeInstanceOf(HasDependentsError);
    expect(err.message).toContain('3 goal(s)');
    expect(err.details.map((d) => d.message)).toEqual(['2 objective(s) use this time period', '1 initiative(s) use this time period']);
  });
});
