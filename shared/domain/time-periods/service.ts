import { isAdmin } from '#shared/auth/caller.ts';
import { newId } from '#shared/ids.ts';
import { directoryAccessSource, directoryChecks, type AccessSource, type Checks } from '#shared/auth/permissions.ts';
import { nowIso } from '#shared/clock.ts';
import { createEntity, retryOnConflict } from '#shared/db/commands.ts';
import { entriesOf } from '#shared/db/index-queries.ts';
import type { DataCtx } from '#shared/db/model.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { removeUnreferenced } from '#shared/db/references.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalEntity, GOAL_KINDS, goalsInPeriod, type GoalKind } from '#shared/domain/goals/entity.ts';
import {
  checkGoalsWithin,
  decideCreateTimePeriod,
  decideDeleteTimePeriod,
  decideUpdateTimePeriod,
  periodInUse,
  type TimePeriodCreate,
  type TimePeriodUpdate,
} from '#shared/domain/time-periods/decide.ts';
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
  return createEntity(ctx, timePeriodEntity, decideCreateTimePeriod(ctx.caller, input, nowIso(), newId()));
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
 * Deletes a period no non-discarded goal uses; returns the deleted record. The goals' references are held in
 * the period's own partition and the delete goes through the store's removeUnreferenced (mark, consistent
 * read of the references, delete): a goal create racing the delete either commits first and is seen, or
 * fails its check that the period is alive (docs/data-model.md, references that hold).
 */
export async function deleteTimePeriod(ctx: DomainCtx, id: string): Promise<TimePeriodRecord> {
  return retryOnConflict(async () => {
    const current = await getEntity(ctx, timePeriodEntity, id, true);
    if (!current) throw notFound(id);
    decideDeleteTimePeriod(ctx.caller);
    const byKind = (refs: Array<{ list: string }>) => GOAL_KINDS.map((k) => [k, refs.filter((r) => r.list === k).length] as const);
    await removeUnreferenced(ctx, timePeriodEntity, current, { onReferenced: (refs) => periodInUse(byKind(refs)) ?? periodInUse([['goal', refs.length]])! });
    return current.record;
  });
}


export const timePeriodChecks = (ctx: DomainCtx): Checks => directoryChecks(ctx.caller);
export const timePeriodAccessSource = (ctx: DomainCtx): AccessSource => directoryAccessSource(ctx.caller);
export const timePeriodCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: isAdmin(ctx.caller) });
