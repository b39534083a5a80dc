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
import { isAdmin, type Caller } from '#shared/auth/caller.ts';
import { accept, refuse, type Decision } from '#shared/decision.ts';
import { ForbiddenError, HasDependentsError, ValidationError, type AppError, type ErrorDetail } from '#shared/errors.ts';
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

function orderRefusal(start: string, end: string, sent: TimePeriodUpdate): AppError | undefined {
  if (start <= end) return undefined;
  const message = `start_date ${start} must be on or before end_date ${end}`;
  const fields = (['start_date', 'end_date'] as const).filter((f) => sent[f] !== undefined);
  return new ValidationError(
    message,
    fields.map((field) => ({ field, code: 'out_of_order', message })),
  );
}

const adminRefusal = (caller: Caller, what: string): AppError | undefined => (isAdmin(caller) ? undefined : new ForbiddenError(what));

/** Admins only (a replayed create's gate too). */
export const timePeriodCreateRefusal = (caller: Caller) => adminRefusal(caller, 'Only admins can create time periods');

export function decideCreateTimePeriod(caller: Caller, cmd: TimePeriodCreate, now: string, uuid: string): Decision<TimePeriodRecord> {
  const refusal = timePeriodCreateRefusal(caller) ?? orderRefusal(cmd.start_date, cmd.end_date, cmd);
  return refusal ? refuse(refusal) : accept(newTimePeriodRecord({ ...cmd, creator_uuid: caller.userId }, now, uuid));
}

export interface TimePeriodChange {
  next: TimePeriodRecord;
  /** The range narrowed: the period's goals must be read and passed to `checkGoalsWithin`. */
  narrows: boolean;
}

export function decideUpdateTimePeriod(
  caller: Caller,
  before: TimePeriodRecord,
  cmd: TimePeriodUpdate,
  now: string,
): Decision<TimePeriodChange> {
  const refusal = adminRefusal(caller, 'Only admins can update time periods');
  if (refusal) return refuse(refusal);
  const next: TimePeriodRecord = {
    ...before,
    name: cmd.name?.trim() ?? before.name,
    start_date: cmd.start_date ?? before.start_date,
    end_date: cmd.end_date ?? before.end_date,
    updated_at: now,
  };
  const order = orderRefusal(next.start_date, next.end_date, cmd);
  return order ? refuse(order) : accept({ next, narrows: next.start_date > before.start_date || next.end_date < before.end_date });
}

/**
 * The whole update once read: `goals`, the period's non-discarded goals, read when the change narrows the
 * range (`narrowsRange`; undefined otherwise). New dates that would leave one outside are refused (header).
 */
export function decideUpdateTimePeriodWithin(
  caller: Caller,
  before: TimePeriodRecord,
  cmd: TimePeriodUpdate,
  goals: GoalDates[] | undefined,
  now: string,
): Decision<TimePeriodRecord> {
  const change = decideUpdateTimePeriod(caller, before, cmd, now);
  if ('error' in change) return change;
  const outside = change.write.narrows ? goalsOutsideRefusal(change.write.next, goals ?? []) : undefined;
  return outside ? refuse(outside) : accept(change.write.next);
}

/** Whether an update narrows the period's range (its goals must then be read); the same rule decideUpdateTimePeriod applies. */
export const narrowsRange = (before: TimePeriodRecord, cmd: TimePeriodUpdate) =>
  (cmd.start_date ?? before.start_date) > before.start_date || (cmd.end_date ?? before.end_date) < before.end_date;

/** The refusal of new dates that would leave a non-discarded goal of the period outside them (header). */
export function goalsOutsideRefusal(next: TimePeriodRecord, goals: GoalDates[]): AppError | undefined {
  const early = goals.filter((g) => g.start_date < next.start_date).map((g) => g.uuid);
  const late = goals.filter((g) => g.end_date > next.end_date).map((g) => g.uuid);
  if (early.length + late.length === 0) return undefined;
  const detail = (field: string, ids: string[], side: string): ErrorDetail => ({
    field,
    code: 'goals_out_of_range',
    message: `${ids.length} goal(s) of this period would ${side} the new range (e.g. ${ids.slice(0, 5).join(', ')}); change their dates first`,
  });
  const details = [
    ...(early.length ? [detail('start_date', early, 'start before')] : []),
    ...(late.length ? [detail('end_date', late, 'end after')] : []),
  ];
  return new ValidationError(details.map((d) => d.message).join('; '), details);
}

/** Permission first (it needs no read of the goals); the store's removeUnreferenced then refuses while goals use it (periodInUse). */
export function decideDeleteTimePeriod(caller: Caller, period: TimePeriodRecord): Decision<TimePeriodRecord> {
  const refusal = adminRefusal(caller, 'Only admins can delete time periods');
  return refusal ? refuse(refusal) : accept(period);
}

/** The refusal of a delete while goals use the period (undefined: none does). */
export function periodInUse(counts: GoalCounts): HasDependentsError | undefined {
  const used = counts.filter(([, n]) => n > 0);
  const total = used.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return undefined;
  const message = `The time period is used by ${total} goal(s) that are not discarded (${used.map(([k, n]) => `${n} ${k}`).join(', ')})`;
  return new HasDependentsError(
    message,
    used.map(([k, n]) => ({ field: 'goals', code: 'has_dependents', message: `${n} ${k}(s) use this time period` })),
  );
}
