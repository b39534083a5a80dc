import type { z } from 'zod';
import { isAdmin } from '#shared/auth/caller.ts';
import { directoryAccessSource, directoryChecks, requireAdmin, type AccessSource, type Checks } from '#shared/auth/permissions.ts';
import { createEntity, entriesOf, getEntities, getEntity, mutateEntity, nowIso, retryOnConflict, WriteTx, type DataCtx } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalEntity, GOAL_KINDS, goalsInPeriod, type GoalKind } from '#shared/domain/goals/entity.ts';
import { sentFields } from '#shared/domain/fields.ts';
import { newTimePeriodRecord, timePeriodEntity, type TimePeriodRecord } from '#shared/domain/time-periods/entity.ts';
import { HasDependentsError, NotFoundError, ValidationError, type ErrorDetail } from '#shared/errors.ts';
import type { TimePeriodCreateBody, TimePeriodUpdateBody } from '#shared/schemas/time-periods.ts';

export type TimePeriodCreateInput = z.infer<typeof TimePeriodCreateBody>;
export type TimePeriodUpdateInput = z.infer<typeof TimePeriodUpdateBody>;

/*
 * Time periods are an extension (contract section 8), a directory resource (section 5): admins create,
 * update and delete; everyone reads. Decisions:
 *  - start_date <= end_date (inclusive bounds), checked here for create and update alike (422 naming the
 *    date fields sent).
 *  - Moving dates is allowed only while every non-discarded goal of the period (archived ones included)
 *    stays inside the new range: goals' dates must fall within their period (spec, goal rules 1-2), and
 *    silently leaving them outside, or rewriting them, would break that. Refused with 422 validation_failed,
 *    code goals_out_of_range, naming the date field that would strand goals. Widening never checks.
 *  - Delete is refused (422 has_dependents) while a non-discarded goal uses the period; discarded goals
 *    keep their (then dangling) time_period_uuid, as nothing is destroyed on a goal delete.
 *  Both checks read the goals' `time_period` entry lists on GSI1 before the period write commits; a goal
 *  write committing in between can be missed (a narrow race accepted here: guarding it would need every
 *  goal write to touch the period item, serializing all goal writes of a period).
 */

const notFound = (id: string) => new NotFoundError('Time period', id);

/** The tenant's time period, or undefined (goals decide their own error for an unknown period). */
export async function getTimePeriod(ctx: DomainCtx, uuid: string): Promise<TimePeriodRecord | undefined> {
  return ctx.loader.one(timePeriodEntity, uuid);
}

/** The time period for GET /time_periods/{id}: 404 when it is not in the caller's tenant. */
export async function showTimePeriod(ctx: DomainCtx, id: string): Promise<TimePeriodRecord> {
  const period = await getTimePeriod(ctx, id);
  if (!period) throw notFound(id);
  return period;
}

/** Ids of the non-discarded goals (every kind) in the period, from the entry lists `<kind>@time_period#<uuid>`. */
async function liveGoalsOf(ctx: DataCtx, periodUuid: string): Promise<Array<{ kind: GoalKind; id: string }>> {
  const found: Array<{ kind: GoalKind; id: string }> = [];
  for (const kind of GOAL_KINDS) {
    for await (const e of entriesOf(ctx, goalsInPeriod(kind), periodUuid)) {
      if (e.state !== 'discarded') found.push({ kind, id: e.id });
    }
  }
  return found;
}

function checkOrder(start: string, end: string, sent: { start_date?: string; end_date?: string }): void {
  if (start <= end) return;
  const message = `start_date ${start} must be on or before end_date ${end}`;
  const fields = (['start_date', 'end_date'] as const).filter((f) => sent[f] !== undefined);
  throw new ValidationError(message, fields.map((field) => ({ field, code: 'out_of_order', message })));
}

/** Refuses new dates that would leave a non-discarded goal of the period outside them (see the decisions above). */
async function checkGoalsWithin(ctx: DataCtx, next: TimePeriodRecord): Promise<void> {
  const live = await liveGoalsOf(ctx, next.uuid);
  if (live.length === 0) return;
  const goals = [...(await getEntities(ctx, goalEntity, live.map((g) => g.id))).values()].map((s) => s.record);
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

export async function createTimePeriod(ctx: DomainCtx, input: TimePeriodCreateInput): Promise<TimePeriodRecord> {
  requireAdmin(ctx.caller, 'Only admins can create time periods');
  checkOrder(input.start_date, input.end_date, input);
  return createEntity(ctx, timePeriodEntity, newTimePeriodRecord({ ...input, creator_uuid: ctx.caller.userId }, nowIso()));
}

export async function updateTimePeriod(ctx: DomainCtx, id: string, input: TimePeriodUpdateInput): Promise<TimePeriodRecord> {
  const { after } = await mutateEntity(
    ctx,
    timePeriodEntity,
    id,
    async (current) => {
      const before = current.record;
      requireAdmin(ctx.caller, 'Only admins can update time periods');
      const next: TimePeriodRecord = { ...before, ...sentFields(input), updated_at: nowIso() };
      checkOrder(next.start_date, next.end_date, input);
      if (next.start_date > before.start_date || next.end_date < before.end_date) await checkGoalsWithin(ctx, next);
      return next;
    },
    () => notFound(id),
  );
  return after;
}

/** Deletes a period no non-discarded goal uses; returns the deleted record. */
export async function deleteTimePeriod(ctx: DomainCtx, id: string): Promise<TimePeriodRecord> {
  return retryOnConflict(async () => {
    const current = await getEntity(ctx, timePeriodEntity, id, true);
    if (!current) throw notFound(id);
    requireAdmin(ctx.caller, 'Only admins can delete time periods');
    const live = await liveGoalsOf(ctx, id);
    if (live.length > 0) {
      const counts = GOAL_KINDS.map((k) => [k, live.filter((g) => g.kind === k).length] as const).filter(([, n]) => n > 0);
      const message = `The time period is used by ${live.length} goal(s) that are not discarded (${counts.map(([k, n]) => `${n} ${k}`).join(', ')})`;
      throw new HasDependentsError(message, counts.map(([k, n]) => ({ field: 'goals', code: 'has_dependents', message: `${n} ${k}(s) use this time period` })));
    }
    await new WriteTx(ctx).remove(timePeriodEntity, current).commit();
    return current.record;
  });
}

export const presentTimePeriod = (p: TimePeriodRecord) => ({
  uuid: p.uuid,
  name: p.name,
  start_date: p.start_date,
  end_date: p.end_date,
  creator_uuid: p.creator_uuid,
  created_at: p.created_at,
  updated_at: p.updated_at,
});

export const timePeriodChecks = (ctx: DomainCtx): Checks => directoryChecks(ctx.caller);
export const timePeriodAccessSource = (ctx: DomainCtx): AccessSource => directoryAccessSource(ctx.caller);
export const timePeriodCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: isAdmin(ctx.caller) });
