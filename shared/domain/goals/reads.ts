/** What goal writes read before they decide: the period, the referenced users and teams, new parents (with the cycle walk), the hierarchy guard. */
import { getEntities, getSide, WriteTx, type Stored } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import { goalEntity, hierarchyGuardKey, type GoalRecord, type VisibleEntity } from '#shared/domain/goals/entity.ts';
import { closesCycle } from '#shared/domain/goals/hierarchy.ts';
import { teamEntity } from '#shared/domain/teams/entity.ts';
import type { TimePeriodRecord } from '#shared/domain/time-periods/entity.ts';
import { getTimePeriod } from '#shared/domain/time-periods/service.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { ForbiddenError, ValidationError, type ErrorDetail } from '#shared/errors.ts';
import { uniq } from '#shared/domain/goals/rules.ts';

/** The time period a goal names: 422 when it is not one of the tenant's. */
export async function periodOf(ctx: DomainCtx, uuid: string): Promise<TimePeriodRecord> {
  const period = await getTimePeriod(ctx, uuid);
  if (!period) throw ValidationError.field('time_period_uuid', 'not_found', `time_period_uuid ${uuid} is not a time period of this tenant`);
  return period;
}


/** Owners, delegates, teams and visible entities must exist in the caller's tenant; each bad uuid is named. */
export async function referenceDetails(
  ctx: DomainCtx,
  refs: { owner_uuids?: string[]; delegate_uuids?: string[]; team_uuids?: string[]; visible_entities?: VisibleEntity[] },
): Promise<ErrorDetail[]> {
  const userIds = uniq([...(refs.owner_uuids ?? []), ...(refs.delegate_uuids ?? []), ...(refs.visible_entities ?? []).filter((e) => e.entity_type === 'user').map((e) => e.entity_uuid)]);
  const teamIds = uniq([...(refs.team_uuids ?? []), ...(refs.visible_entities ?? []).filter((e) => e.entity_type === 'team').map((e) => e.entity_uuid)]);
  const [users, teams] = await Promise.all([ctx.loader.many(userEntity, userIds), ctx.loader.many(teamEntity, teamIds)]);
  const knownUsers = new Set(users.map((u) => u.uuid));
  const knownTeams = new Set(teams.map((t) => t.uuid));
  const details: ErrorDetail[] = [];
  const check = (field: string, ids: string[] | undefined, known: Set<string>, what: string) => {
    for (const id of uniq(ids)) if (!known.has(id)) details.push({ field, code: 'not_found', message: `${id} is not a ${what} of this tenant` });
  };
  check('owner_uuids', refs.owner_uuids, knownUsers, 'user');
  check('delegate_uuids', refs.delegate_uuids, knownUsers, 'user');
  check('team_uuids', refs.team_uuids, knownTeams, 'team');
  for (const e of refs.visible_entities ?? []) {
    const known = e.entity_type === 'user' ? knownUsers : knownTeams;
    if (!known.has(e.entity_uuid)) details.push({ field: 'visible_entities', code: 'not_found', message: `${e.entity_uuid} is not a ${e.entity_type} of this tenant` });
  }
  return details;
}

/**
 * New parents: goals of the tenant the caller can see (an invisible one reads as unknown, so the answer
 * does not reveal it exists), not deleted, and neither the goal itself nor one of its descendants. The
 * cycle check walks up from each parent through goal records, read afresh on every attempt of the write
 * (a request-wide cache could hold a line read before a lost race).
 */
export async function parentDetails(ctx: DomainCtx, goalUuid: string | undefined, added: string[]): Promise<{ details: ErrorDetail[]; parents: Map<string, Stored<GoalRecord>> }> {
  const details: ErrorDetail[] = [];
  const parents = await getEntities(ctx, goalEntity, added.filter((id) => id !== goalUuid), true);
  const lines = new Loader(ctx, true);
  for (const id of added) {
    if (id === goalUuid) {
      details.push({ field: 'parents', code: 'cycle', message: 'A goal cannot be its own parent' });
      continue;
    }
    const p = parents.get(id)?.record;
    const access = p && (await goalAccess(ctx, p));
    if (!p || !access?.canView) details.push({ field: 'parents', code: 'not_found', message: `${id} is not a goal of this tenant` });
    // contract 5: a parent's progress is its owners' to decide; placing a goal under it needs the right to update it
    else if (!access.canEdit) throw new ForbiddenError(`You cannot place a goal under ${id}: you cannot update that goal`);
    else if (p.discarded_at) details.push({ field: 'parents', code: 'discarded', message: `${id} is a deleted goal` });
    else if (goalUuid && (await closesCycle(goalUuid, p, lines))) details.push({ field: 'parents', code: 'cycle', message: `${id} is below this goal: linking it as a parent would make a cycle` });
  }
  return { details, parents };
}



/**
 * New parents must be as read when the goal's write commits: a concurrent write that deletes a parent or
 * links it below this goal (a two-goal cycle) then conflicts, and the retry reads it again and refuses.
 */
export function requireUnchanged(tx: WriteTx, parents: Iterable<Stored<GoalRecord>>): void {
  for (const s of parents) tx.checkVersion(goalEntity, s);
}

/**
 * The tenant's hierarchy guard: a side item whose version every parent-adding update reads before its cycle
 * walk and bumps in its transaction (docs/data-model.md). A create needs none: a new goal has no descendants.
 */
export async function guardHierarchy(ctx: DomainCtx, tx: WriteTx): Promise<void> {
  const key = hierarchyGuardKey(ctx.tenantId);
  const read = (await getSide(ctx, key))?.v as number | undefined;
  tx.putSide(key, { kind: 'goal_hierarchy_guard', v: (read ?? 0) + 1 }, { if: read === undefined ? { exists: false } : { equals: { v: read } } });
}

/**
 * What reading one goal needs first, for the route's read-ahead: the goal item (batched with the caller's
 * user) and the caller's teams (visibility of a limited goal), so a get is one round trip in sequence.
 */
export const goalReadAhead = (params: Record<string, string>) => ({ entities: params.id ? [{ type: goalEntity.type, id: params.id }] : [], teams: true });
