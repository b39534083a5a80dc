/**
 * What the goal commands' decisions share: who runs them, the goals they read, the references a body names
 * (owners, delegates, teams, visible entities, period, parents) and the refusals of a goal write. Pure.
 */
import type { Stored } from '#shared/db/model.ts';
import { uniq } from '#shared/domain/fields.ts';
import { goalEditRefusal, type GoalAccess } from '#shared/domain/goals/refusals.ts';
import type { GoalKind, GoalRecord } from '#shared/domain/goals/entity.ts';
import { ForbiddenError, NotFoundError, ValidationError, type AppError, type ErrorDetail } from '#shared/errors.ts';

/** Who runs the command. */
export interface Actor {
  userUuid: string;
  /** Admins and members create goals; viewers do not (contract 5). */
  canWriteContent: boolean;
}

/** A goal read for a command, with the caller's access to it. */
export interface SeenGoal {
  stored: Stored<GoalRecord>;
  access: GoalAccess;
}

/** What exists in the tenant among the users and teams a body names. */
export interface KnownRefs {
  users: ReadonlySet<string>;
  teams: ReadonlySet<string>;
}

/** The users and teams a body names, to read in the command's batch. */
export function referencedIds(refs: {
  owner_uuids?: string[];
  delegate_uuids?: string[];
  team_uuids?: string[];
  visible_entities?: Array<{ entity_type: string; entity_uuid: string }>;
}) {
  const entities = refs.visible_entities ?? [];
  return {
    users: uniq([
      ...(refs.owner_uuids ?? []),
      ...(refs.delegate_uuids ?? []),
      ...entities.filter((e) => e.entity_type === 'user').map((e) => e.entity_uuid),
    ]),
    teams: uniq([...(refs.team_uuids ?? []), ...entities.filter((e) => e.entity_type === 'team').map((e) => e.entity_uuid)]),
  };
}

/** Owners, delegates, teams and visible entities must exist in the caller's tenant; each bad uuid is named. */
export function referenceDetails(
  refs: {
    owner_uuids?: string[];
    delegate_uuids?: string[];
    team_uuids?: string[];
    visible_entities?: Array<{ entity_type: 'user' | 'team'; entity_uuid: string }>;
  },
  known: KnownRefs,
): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const check = (field: string, ids: string[] | undefined, set: ReadonlySet<string>, what: string) => {
    for (const id of uniq(ids))
      if (!set.has(id)) details.push({ field, code: 'not_found', message: `${id} is not a ${what} of this tenant` });
  };
  check('owner_uuids', refs.owner_uuids, known.users, 'user');
  check('delegate_uuids', refs.delegate_uuids, known.users, 'user');
  check('team_uuids', refs.team_uuids, known.teams, 'team');
  for (const e of refs.visible_entities ?? []) {
    if (!(e.entity_type === 'user' ? known.users : known.teams).has(e.entity_uuid)) {
      details.push({ field: 'visible_entities', code: 'not_found', message: `${e.entity_uuid} is not a ${e.entity_type} of this tenant` });
    }
  }
  return details;
}

export const unknownPeriod = (uuid: string) =>
  ValidationError.field('time_period_uuid', 'not_found', `time_period_uuid ${uuid} is not a time period of this tenant`);

/**
 * New parents: goals of the tenant the caller can see (an invisible one reads as unknown, so the answer
 * does not reveal it exists), that it may change (403: placing a goal under a parent moves the parent's
 * progress), not deleted, and neither the goal itself nor (`below`) one of its descendants.
 */
export function parentRefusal(
  goalUuid: string | undefined,
  added: string[],
  parents: ReadonlyMap<string, SeenGoal>,
  below: ReadonlySet<string> = new Set(),
): { error?: AppError; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  for (const id of added) {
    if (id === goalUuid) {
      details.push({ field: 'parents', code: 'cycle', message: 'A goal cannot be its own parent' });
      continue;
    }
    const p = parents.get(id);
    if (!p?.access.canView) details.push({ field: 'parents', code: 'not_found', message: `${id} is not a goal of this tenant` });
    else if (!p.access.canEdit)
      return { error: new ForbiddenError(`You cannot place a goal under ${id}: you cannot update that goal`), details };
    else if (p.stored.record.discarded_at) details.push({ field: 'parents', code: 'discarded', message: `${id} is a deleted goal` });
    else if (below.has(id))
      details.push({ field: 'parents', code: 'cycle', message: `${id} is below this goal: linking it as a parent would make a cycle` });
  }
  return { details };
}

export const failure = (details: ErrorDetail[]): AppError | undefined =>
  details.length
    ? new ValidationError(details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).join('; '), details)
    : undefined;

/**
 * A goal the caller may change: 404 for a goal of another kind (its path does not exist), the edit refusal
 * (403), 422 when deleted.
 */
export function editRefusal(kind: GoalKind, goal: GoalRecord, access: GoalAccess): AppError | undefined {
  if (goal.type !== kind) return goalNotFound(kind, goal.uuid);
  return (
    goalEditRefusal(access) ??
    (goal.discarded_at ? ValidationError.field('discarded_at', 'discarded', 'This goal is deleted; it cannot be changed') : undefined)
  );
}

export const goalNotFound = (kind: GoalKind, id: string) => new NotFoundError(kind.replace('_', ' '), id);

/** Viewers create nothing (contract 5): a create's precheck, answered before anything is read. */
export const createRefusal = (actor: Actor): AppError | undefined =>
  actor.canWriteContent ? undefined : new ForbiddenError('Viewers cannot change content');
