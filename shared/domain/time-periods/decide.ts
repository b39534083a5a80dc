/**
 * Time periods: the rules of each command as pure functions (no I/O, no clock, no id generation: the
 * caller passes what was read, `now` and the new uuid). service.ts reads, calls these, and writes once.
 *
 * Time periods are an extension (contract section 8), a directory resource (section 5): admins create,
 * update and delete; everyone reads. Decisions:
 *  - start_date <= end_date (inclusive bounds), for create and update alike (422 naming the date fields sent).
 *  - Moving dates is allowed only while every non-discarded goal of the period (archived ones included)
 *    stays inside the new range: goals' dates must fall within their period (spec, goal rules 1-2), and
 *    silently leaving them outside, or rewriting them, would break that. Refused with 422 validation_failed,
 *    code goals_out_of_range, naming the date field that would strand goals. Widening never checks.
 *  - Delete is refused (422 has_dependents) while a non-discarded goal uses the period; discarded goals
 *    keep their (then dangling) time_period_uuid, as nothing is destroyed on a goal delete.
 */
import type { Caller } from '#shared/auth/caller.ts';
import { requireAdmin } from '#shared/auth/permissions.ts';
import { HasDependentsError, ValidationError, type ErrorDetail } from '#shared/errors.ts';
import { newTimePeriodRecord, type TimePeriodRecord } from '#shared/domain/time-periods/entity.ts';

export interface TimePeriodCreate {
  name: string;
  start_date: string;
  end_date: string;
}

/** Fields left undefined are unchanged. */
export type TimePeriodUpdate = Partial<TimePeriodCreate>;

/** What a period's goals must satisfy for a date change: their own dates. */
export interface GoalDates {
  uuid: string;
  start_date: string;
  end_date: string;
}

/** Non-discarded goals of a period, counted per kind (only non-zero kinds are named in the error). */
export type GoalCounts = ReadonlyArray<readonly [kind: string, count: number]>;

function checkOrder(start: string, end: string, sent: TimePeriodUpdate): void {
  if (start <= end) return;
  const message = `start_date ${start} must be on or before end_date ${end}`;
  const fields = (['start_date', 'end_date'] as const).filter((f) => sent[f] !== undefined);
  throw new ValidationError(message, fields.map((field) => ({ field, code: 'out_of_order', message })));
}

export const checkTimePeriodCreateAllowed = (caller: Caller) => requireAdmin(caller, 'Only admins can create time periods');

export function decideCreateTimePeriod(caller: Caller, cmd: TimePeriodCreate, now: string, uuid: string): TimePeriodRecord {
  checkTimePeriodCreateAllowed(caller);
  checkOrder(cmd.start_date, cmd.end_date, cmd);
  return newTimePeriodRecord({ ...cmd, creator_uuid: caller.userId }, now, uuid);
}

export interface TimePeriodChange {
  next: TimePeriodRecord;
  /** The range narrowed: the period's goals must be read and passed to `checkGoalsWithin`. */
  narrows: boolean;
}

export function decideUpdateTimePeriod(caller: Caller, before: TimePeriodRecord, cmd: TimePeriodUpdate, now: string): TimePeriodChange {
  requireAdmin(caller, 'Only admins can update time periods');
  const next: TimePeriodRecord = {
    ...before,
    name: cmd.name?.trim() ?? before.name,
    start_date: cmd.start_date ?? before.start_date,
    end_date: cmd.end_date ?? before.end_date,
    updated_at: now,
  };
  checkOrder(next.start_date, next.end_date, cmd);
  return { next, narrows: next.start_date > before.start_date || next.end_date < before.end_date };
}

/** Refuses new dates that would leave a non-discarded goal of the period outside them (header). */
export function checkGoalsWithin(next: TimePeriodRecord, goals: GoalDates[]): void {
  const early = goals.filter((g) => g.start_date < next.start_date).map((g) => g.uuid);
  const late = goals.filter((g) => g.end_date > next.end_date).map((g) => g.uuid);
  if (early.length + late.length === 0) return;
  const detail = (field: string, ids: string[], side: string): ErrorDetail => ({
    field,
    code: 'goals_out_of_range',
    message: `${ids.length} goal(s) of this period would ${side} the new range (e.g. ${ids.slice(0, 5).join(', ')}); change their dates first`,
  });
  const details = [...(early.length ? [detail('start_date', early, 'start before')] : []), ...(late.length ? [detail('end_date', late, 'end after')] : [])];
  throw new ValidationError(details.map((d) => d.message).join('; '), details);
}

/** Permission first (it needs no read of the goals); then `checkNoDependents` on what was read. */
export function decideDeleteTimePeriod(caller: Caller): void {
  requireAdmin(caller, 'Only admins can delete time periods');
}

/** The refusal of a delete while goals use the period (undefined: none does). */
export function periodInUse(counts: GoalCounts): HasDependentsError | undefined {
  const used = counts.filter(([, n]) => n > 0);
  const total = used.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return undefined;
  const message = `The time period is used by ${total} goal(s) that are not discarded (${used.map(([k, n]) => `${n} ${k}`).join(', ')})`;
  return new HasDependentsError(message, used.map(([k, n]) => ({ field: 'goals', code: 'has_dependents', message: `${n} ${k}(s) use this time period` })));
}

