import { isAdmin } from '#shared/auth/caller.ts';
import { directoryAccessSource, directoryChecks, type AccessSource, type Checks } from '#shared/auth/permissions.ts';
import { createEntity, entriesOf, getEntities, getEntity, nowIso, retryOnConflict, WriteTx, type DataCtx, type Stored } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalEntity, GOAL_KINDS, goalsInPeriod, type GoalKind } from '#shared/domain/goals/entity.ts';
import {
  checkGoalsWithin,
  checkNoDependents,
  decideCreateTimePeriod,
  decideDeleteTimePeriod,
  decideUpdateTimePeriod,
  type TimePeriodCreate,
  type TimePeriodUpdate,
} from '#shared/domain/time-periods/decide.ts';
import { referencedSince } from '#shared/domain/references.ts';
import { timePeriodEntity, type TimePeriodRecord } from '#shared/domain/time-periods/entity.ts';
import { NotFoundError } from '#shared/errors.ts';

/*
 * Time period commands: read, decide (decide.ts, where the rules are), write once. The dependents checks
 * read the goals' `time_period` entry lists on GSI1 before the period write commits.
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
  const perKind = await Promise.all(
    GOAL_KINDS.map(async (kind) => {
      const found: Array<{ kind: GoalKind; id: string }> = [];
      for await (const e of entriesOf(ctx, goalsInPeriod(kind), periodUuid)) if (e.state !== 'discarded') found.push({ kind, id: e.id });
      return found;
    }),
  );
  return perKind.flat();
}

export async function createTimePeriod(ctx: DomainCtx, input: TimePeriodCreate): Promise<TimePeriodRecord> {
  return createEntity(ctx, timePeriodEntity, decideCreateTimePeriod(ctx.caller, input, nowIso(), crypto.randomUUID()));
}

export async function updateTimePeriod(ctx: DomainCtx, id: string, input: TimePeriodUpdate): Promise<TimePeriodRecord> {
  return retryOnConflict(async () => {
    const current = await getEntity(ctx, timePeriodEntity, id, true);
    if (!current) throw notFound(id);
    const { next, narrows } = decideUpdateTimePeriod(ctx.caller, current.record, input, nowIso());
    if (narrows) {
      const live = await liveGoalsOf(ctx, id);
      checkGoalsWithin(next, [...(await getEntities(ctx, goalEntity, live.map((g) => g.id))).values()].map((s) => s.record));
    }
    await new WriteTx(ctx).replace(timePeriodEntity, current, next).commit();
    return next;
  });
}

/**
 * Deletes a period no non-discarded goal uses; returns the deleted record. The delete is conditioned on the
 * version read, and every goal write that references the period moves that version (store markReferenced):
 * a goal committed after the dependents were read makes the delete retry, and the retry refuses it even
 * before the index shows the goal (referencedSince).
 */
export async function deleteTimePeriod(ctx: DomainCtx, id: string): Promise<TimePeriodRecord> {
  let first: Stored<TimePeriodRecord> | undefined;
  return retryOnConflict(async () => {
    const current = await getEntity(ctx, timePeriodEntity, id, true);
    if (!current) throw notFound(id);
    first ??= current;
    decideDeleteTimePeriod(ctx.caller);
    const live = await liveGoalsOf(ctx, id);
    checkNoDependents(GOAL_KINDS.map((k) => [k, live.filter((g) => g.kind === k).length] as const), referencedSince(first, current));
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
