import { isAdmin } from '#shared/auth/caller.ts';
import { newId } from '#shared/ids.ts';
import { directoryAccessSource, directoryChecks, type AccessSource, type Checks } from '#shared/auth/permissions.ts';
import { orStored, runCommand } from '#shared/command/run.ts';
import { entriesOf } from '#shared/db/index-queries.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { removeUnreferenced } from '#shared/db/references.ts';
import { refuse } from '#shared/decision.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { entityShow } from '#shared/domain/entity-show.ts';
import { goalEntity, GOAL_KINDS, goalsInPeriod, type GoalKind } from '#shared/domain/goals/entity.ts';
import {
  decideCreateTimePeriod,
  decideDeleteTimePeriod,
  decideUpdateTimePeriodWithin,
  narrowsRange,
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

/** The time period for GET /time_periods/{id}: 404 when it is not in the caller's tenant. */
export const showTimePeriod = entityShow(timePeriodEntity, notFound);

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
  const uuid = newId();
  return runCommand(ctx, {
    read: async () => undefined,
    decide: (_, now) => decideCreateTimePeriod(ctx.caller, input, now, uuid),
    write: (tx, record) => (tx.create(timePeriodEntity, record), record),
    stored: orStored(timePeriodEntity, uuid, (stored) => stored),
  });
}

export async function updateTimePeriod(ctx: DomainCtx, id: string, input: TimePeriodUpdate): Promise<TimePeriodRecord> {
  return runCommand(ctx, {
    read: async () => {
      const current = await getEntity(ctx, timePeriodEntity, id, true);
      // a narrowed range reads the period's goals (an admin's change only: nothing is read for a refusal)
      const goals =
        current && isAdmin(ctx.caller) && narrowsRange(current.record, input)
          ? [
              ...(
                await getEntities(
                  ctx,
                  goalEntity,
                  (await liveGoalsOf(ctx, id)).map((g) => g.id),
                )
              ).values(),
            ].map((s) => s.record)
          : undefined;
      return current && { current, goals };
    },
    decide: (s, now) => (s ? decideUpdateTimePeriodWithin(ctx.caller, s.current.record, input, s.goals, now) : refuse(notFound(id))),
    write: (tx, next, s) => (tx.replace(timePeriodEntity, s!.current, next), next),
  });
}

/**
 * Deletes a period no non-discarded goal uses; returns the deleted record. The goals' references are held in
 * the period's own partition and the delete goes through the store's removeUnreferenced (mark, consistent
 * read of the references, delete; it commits itself): a goal create racing the delete either commits first
 * and is seen, or fails its check that the period is alive (docs/data-model.md, references that hold).
 */
export async function deleteTimePeriod(ctx: DomainCtx, id: string): Promise<TimePeriodRecord> {
  const byKind = (refs: Array<{ list: string }>) => GOAL_KINDS.map((k) => [k, refs.filter((r) => r.list === k).length] as const);
  return runCommand(ctx, {
    read: () => getEntity(ctx, timePeriodEntity, id, true),
    decide: (current) => (current ? decideDeleteTimePeriod(ctx.caller, current.record) : refuse(notFound(id))),
    write: async (_tx, period, current) => {
      await removeUnreferenced(ctx, timePeriodEntity, current!, {
        onReferenced: (refs) => periodInUse(byKind(refs)) ?? periodInUse([['goal', refs.length]])!,
      });
      return period;
    },
  });
}

export const timePeriodChecks = (ctx: DomainCtx): Checks => directoryChecks(ctx.caller);
export const timePeriodAccessSource = (ctx: DomainCtx): AccessSource => directoryAccessSource(ctx.caller);
export const timePeriodCollectionChecks = (ctx: DomainCtx): Checks => ({ can_create: isAdmin(ctx.caller) });
