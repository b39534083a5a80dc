/**
 * Teams: the rules of each command as pure functions (no I/O, no clock, no id generation). service.ts
 * reads what they need, calls them, and writes once. Contract sections 5 and 10.
 *
 * Permissions. Contract 5 says both "admins create, update and delete teams" and "a member manages teams
 * it owns". Decision:
 *  - admins create, update, move (change parent_uuid) and delete any team;
 *  - a member who owns a team updates its attributes, owners and members, but neither moves it nor deletes
 *    it: both change the organisation around the team (a move re-depths a whole subtree under another
 *    team; a delete detaches sub-teams), which is an admin decision. Sending the current parent_uuid back
 *    unchanged is not a move;
 *  - viewers write nothing, even on a team they own; everyone reads every team.
 *
 * Tree. parent_uuid names a team of the tenant; no team is its own ancestor; depth is 0 for a root team and
 * the parent's depth + 1 otherwise, kept true for the whole subtree whenever a team moves. Every change to
 * the tree is one transaction (max 100 items); a change that would not fit is refused with 422 `too_many`
 * rather than applied in pieces, which could leave depths inconsistent.
 *
 * Delete. Refused (422 has_dependents, naming them) while an active sub-team or a non-discarded goal
 * references the team. Archived sub-teams do not block it: they are detached in the same transaction,
 * becoming root teams (parent_uuid null, depth 0) with their own sub-trees moving up with them.
 */
import { canWriteContent, isAdmin, type Caller } from '#shared/auth/caller.ts';
import { accept, refuse, type Decision } from '#shared/decision.ts';
import { uniq } from '#shared/domain/fields.ts';
import type { TeamRecord, TeamStatus } from '#shared/domain/teams/entity.ts';
import {
  ForbiddenError,
  HasDependentsError,
  MAX_TRANSACTION_ITEMS,
  TooManyWritesError,
  ValidationError,
  type AppError,
  type ErrorDetail,
} from '#shared/errors.ts';

export interface TeamCreate {
  name: string;
  display_name?: string;
  parent_uuid?: string | null;
  owner_uuids?: string[];
  member_uuids?: string[];
  status?: TeamStatus;
  is_org?: boolean;
  /** SCIM provisioning only (the REST bodies have no such field): the identity provider's id of the group. */
  scim_external_id?: string | null;
}

/** Fields left undefined are unchanged; `parent_uuid: null` makes the team a root team. */
export type TeamUpdate = Partial<TeamCreate>;

/** DynamoDB's TransactWriteItems limit: one tree change is one transaction. */
export const MAX_TX_ITEMS = MAX_TRANSACTION_ITEMS;
/** Dependents named in a has_dependents error, per kind (enough to act on without reading everything). */
export const MAX_DEPENDENTS_NAMED = 10;

const parentNotFound = (id: string) => ValidationError.field('parent_uuid', 'not_found', `parent_uuid ${id} is not a team of this tenant`);
const cycle = () => ValidationError.field('parent_uuid', 'cycle', 'A team cannot be placed under itself or one of its own sub-teams');

export const tooBig = (field: string | undefined) =>
  new TooManyWritesError(field, 'Split it: fewer owners/members per team, or move or archive sub-teams first.');

/** The refusal of a change whose transaction would hold more than MAX_TX_ITEMS items. */
export function fitsRefusal(items: number, field: string | undefined): AppError | undefined {
  return items > MAX_TX_ITEMS ? tooBig(field) : undefined;
}

/** A read bounded by what one transaction can hold, stopped past it (`overflow`: the change would not fit). */
export type Bounded<T> = { items: T[]; overflow?: false } | { items?: undefined; overflow: true };

/** Owners and members named by the command. */
export const usersNamed = (cmd: TeamUpdate) => uniq([...(cmd.owner_uuids ?? []), ...(cmd.member_uuids ?? [])]);

/** Owners and members must be users of the tenant (`known`: those found); every bad uuid is named. */
function usersRefusal(cmd: TeamUpdate, known: ReadonlySet<string>): AppError | undefined {
  const details: ErrorDetail[] = [];
  for (const field of ['owner_uuids', 'member_uuids'] as const) {
    for (const id of uniq(cmd[field]))
      if (!known.has(id)) details.push({ field, code: 'not_found', message: `${id} is not a user of this tenant` });
  }
  return details.length ? new ValidationError(details.map((d) => `${d.field}: ${d.message}`).join('; '), details) : undefined;
}

/** A team owner who may write (viewers never do). */
export const managesTeam = (caller: Caller, t: TeamRecord) => canWriteContent(caller) && t.owner_uuids.includes(caller.userId);

/** Admins only: a create's precheck (and a replayed create's gate), answered before anything is read. */
export const teamCreateRefusal = (caller: Caller): AppError | undefined =>
  isAdmin(caller) ? undefined : new ForbiddenError('Only admins can create teams');

/** `parent` is the team named by parent_uuid as read (undefined: none of the tenant); the new team sits under it. teamCreateRefusal answered before. */
export function decideCreateTeam(
  caller: Caller,
  cmd: TeamCreate,
  read: { users: ReadonlySet<string>; parent?: TeamRecord },
  now: string,
  uuid: string,
): Decision<TeamRecord> {
  const refusal = usersRefusal(cmd, read.users) ?? (cmd.parent_uuid && !read.parent ? parentNotFound(cmd.parent_uuid) : undefined);
  if (refusal) return refuse(refusal);
  return accept({
    uuid,
    name: cmd.name,
    display_name: cmd.display_name ?? cmd.name,
    parent_uuid: cmd.parent_uuid ?? null,
    owner_uuids: uniq(cmd.owner_uuids),
    member_uuids: uniq(cmd.member_uuids),
    status: cmd.status ?? 'active',
    is_org: cmd.is_org ?? false,
    depth: read.parent ? read.parent.depth + 1 : 0,
    creator_uuid: caller.userId,
    ...(cmd.scim_external_id ? { scim_external_id: cmd.scim_external_id } : {}),
    created_at: now,
    updated_at: now,
  });
}

/** What an update must read beyond the team: the users named, and on a move the new parent's chain and the team's subtree. */
export interface TeamUpdatePlan {
  moving: boolean;
  /** The new parent (null: to the root, or not moving). */
  parent: string | null;
}

/** Admins update anything; owners (not viewers) everything but parent_uuid; others 403. What the update reads next, or that refusal. */
export function planTeamUpdate(caller: Caller, team: TeamRecord, cmd: TeamUpdate): Decision<TeamUpdatePlan> {
  const moving = cmd.parent_uuid !== undefined && cmd.parent_uuid !== team.parent_uuid;
  if (!isAdmin(caller)) {
    if (!managesTeam(caller, team))
      return refuse(
        new ForbiddenError(canWriteContent(caller) ? 'Only admins and owners of this team can update it' : 'Viewers cannot change teams'),
      );
    if (moving) return refuse(new ForbiddenError('Only admins can move a team to another parent'));
  }
  return accept({ moving, parent: moving ? (cmd.parent_uuid ?? null) : null });
}

export interface TeamUpdateReads {
  users: ReadonlySet<string>;
  /** On a move under a parent: the parent and its ancestors, nearest first (empty: no such team). */
  parentChain: TeamRecord[];
  /** The chain was longer than a transaction can hold (422 too_many on parent_uuid). */
  chainOverflow?: boolean;
  /** On a move: the teams under the moved one (they move with it when its depth changes). */
  below?: Bounded<TeamRecord>;
}

/** The depth of a team placed under the chain read (a root team: empty chain). */
const depthUnder = (parentChain: TeamRecord[]) => (parentChain[0] ? parentChain[0].depth + 1 : 0);

/**
 * The updated team (`team`) and, when its depth changed (a move), every team under it moved with it
 * (`below`, shiftDepths; read bounded: past a transaction's size, 422 too_many).
 */
export function decideUpdateTeam(
  caller: Caller,
  team: TeamRecord,
  cmd: TeamUpdate,
  read: TeamUpdateReads,
  now: string,
): Decision<{ team: TeamRecord; below: TeamRecord[] }> {
  const plan = planTeamUpdate(caller, team, cmd);
  if ('error' in plan) return plan;
  if (read.chainOverflow) return refuse(tooBig('parent_uuid'));
  const users = usersRefusal(cmd, read.users);
  if (users) return refuse(users);
  const sent = Object.fromEntries(Object.entries(cmd).filter(([, v]) => v !== undefined)) as TeamUpdate;
  const next: TeamRecord = {
    ...team,
    ...sent,
    owner_uuids: cmd.owner_uuids ? uniq(cmd.owner_uuids) : team.owner_uuids,
    member_uuids: cmd.member_uuids ? uniq(cmd.member_uuids) : team.member_uuids,
    depth: team.depth,
    updated_at: now,
  };
  if (!plan.write.moving) return accept({ team: next, below: [] });
  const parent = plan.write.parent;
  if (parent) {
    if (parent === team.uuid) return refuse(cycle());
    if (!read.parentChain.length) return refuse(parentNotFound(parent));
    if (read.parentChain.some((t) => t.uuid === team.uuid)) return refuse(cycle());
  }
  next.depth = depthUnder(read.parentChain);
  if (next.depth === team.depth) return accept({ team: next, below: [] });
  if (!read.below || read.below.overflow) return refuse(tooBig('parent_uuid'));
  return accept({ team: next, below: shiftDepths(read.below.items, next.depth - team.depth, now) });
}

/** The teams under a moved team, their depth shifted by `delta` (the moved team's own change). */
export const shiftDepths = (below: TeamRecord[], delta: number, now: string): TeamRecord[] =>
  delta === 0 ? [] : below.map((d) => ({ ...d, depth: d.depth + delta, updated_at: now }));

/** Refused before anything but the team is read. */
export const teamDeleteRefusal = (caller: Caller): AppError | undefined =>
  isAdmin(caller) ? undefined : new ForbiddenError('Only admins can delete teams');

/** A dependent found on the indexes: a sub-team with its status, or a goal of some kind. */
export interface TeamDependents {
  subTeams: Array<{ uuid: string; status: string | undefined }>;
  goals: Array<{ kind: string; uuid: string }>;
}

const subTeamDetail = (uuid: string): ErrorDetail => ({ field: 'sub_teams', code: 'active_sub_team', message: `active sub-team ${uuid}` });
const dependentsError = (details: ErrorDetail[]) =>
  new HasDependentsError(
    'The team has active sub-teams or OKR relationships; archive or move the sub-teams and remove the team from its goals first',
    details,
  );

/** The refusal of a delete while an active sub-team or a non-discarded goal references the team (undefined: none). */
export function teamInUse(found: TeamDependents): HasDependentsError | undefined {
  const details = [
    ...found.subTeams
      .filter((t) => t.status === 'active')
      .slice(0, MAX_DEPENDENTS_NAMED)
      .map((t) => subTeamDetail(t.uuid)),
    ...found.goals.map((g): ErrorDetail => ({ field: 'goals', code: 'okr_relationship', message: `${g.kind} ${g.uuid}` })),
  ];
  return details.length ? dependentsError(details) : undefined;
}

/** Refuses while the team is in use (teamInUse), or when its sub-teams could not all be detached in one write. */
export function dependentsRefusal(found: TeamDependents): AppError | undefined {
  return teamInUse(found) ?? (found.subTeams.length > MAX_TX_ITEMS ? tooBig(undefined) : undefined);
}

/** The sub-team records are the truth (the index lags writes slightly): an active one refuses the delete. */
export function activeSubTeamRefusal(subTeams: TeamRecord[]): AppError | undefined {
  const active = subTeams.find((t) => t.status === 'active');
  return active ? dependentsError([subTeamDetail(active.uuid)]) : undefined;
}

/**
 * The archived sub-teams of a deleted team as read (`subTeams`, with everything under each in
 * `below.get(uuid)`), rewritten: each becomes a root team and its subtree moves up with it.
 */
export function detachSubTeams(subTeams: TeamRecord[], below: ReadonlyMap<string, TeamRecord[]>, now: string): Decision<TeamRecord[]> {
  const refusal = activeSubTeamRefusal(subTeams);
  if (refusal) return refuse(refusal);
  return accept(
    subTeams.flatMap((child) => [
      { ...child, parent_uuid: null, depth: 0, updated_at: now },
      ...shiftDepths(below.get(child.uuid) ?? [], -child.depth, now),
    ]),
  );
}

/** What a delete reads, in order, each part only while nothing before it refuses (undefined: not read). */
export interface TeamDeleteReads {
  /** The dependents found on the indexes. */
  found?: TeamDependents;
  /** The sub-teams' records. */
  subTeams?: TeamRecord[];
  /** Everything under each sub-team, bounded by what the delete's one transaction can hold. */
  below?: Bounded<[string, TeamRecord[]]>;
}

/**
 * Admins only (403; 404 is the shell's, before); refused while in use (dependentsRefusal, then the sub-team
 * records: activeSubTeamRefusal) or too large for one transaction; else the detached sub-teams to write.
 * The store's removeUnreferenced checks the goals' references again when it deletes.
 */
export function decideDeleteTeam(caller: Caller, read: TeamDeleteReads, now: string): Decision<TeamRecord[]> {
  const refusal =
    teamDeleteRefusal(caller) ?? (read.found && dependentsRefusal(read.found)) ?? (read.subTeams && activeSubTeamRefusal(read.subTeams));
  if (refusal) return refuse(refusal);
  if (!read.below || read.below.overflow) return refuse(tooBig(undefined));
  return detachSubTeams(read.subTeams ?? [], new Map(read.below.items), now);
}
