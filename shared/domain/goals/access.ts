import { isAdmin } from '#shared/auth/caller.ts';
import type { AccessSource } from '#shared/auth/permissions.ts';
import type { ListEntry } from '#shared/db/model.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import { goalEditRefusal, goalViewRefusal, type GoalAccess } from '#shared/domain/goals/refusals.ts';
import { teamEntity, teamUserUuids } from '#shared/domain/teams/entity.ts';
import type { AppError } from '#shared/errors.ts';

// Goal permissions as read: the caller's access to a goal, from the goal and the teams it names (contract
// section 5, spelled out on GoalAccess in goals/refusals.ts, the pure half that decisions import).

export async function goalAccess(ctx: DomainCtx, goal: GoalRecord): Promise<GoalAccess> {
  if (isAdmin(ctx.caller)) return { canView: true, canEdit: true, source: 'admin' };
  const me = ctx.caller.userId;
  const writer = ctx.caller.role !== 'viewer';
  const owner = goal.owner_uuids.includes(me);
  const creator = goal.creator_uuid === me;
  const delegate = goal.delegate_uuids.includes(me);
  // decided without the caller's teams (no read: a create answers for the goal its caller just made)
  if (owner || creator || delegate) return { canView: true, canEdit: writer, source: owner ? 'owner' : creator ? 'creator' : 'delegate' };
  const myTeams = await goalTeamsOf(ctx, goal);
  const onTeam = goal.team_uuids.some((t) => myTeams.has(t));
  const entity = goal.visible_entities.filter((e) => (e.entity_type === 'user' ? e.entity_uuid === me : myTeams.has(e.entity_uuid)));
  const ownsTeam = onTeam && (await ctx.loader.many(teamEntity, goal.team_uuids)).some((t) => t.owner_uuids.includes(me));

  const source: AccessSource | null = owner
    ? 'owner'
    : creator
      ? 'creator'
      : delegate
        ? 'delegate'
        : onTeam
          ? 'team'
          : entity.length
            ? 'visible_entity'
            : goal.visibility === 'public'
              ? 'public'
              : null;
  const canEdit = writer && (owner || creator || delegate || ownsTeam || entity.some((e) => e.mode === 'edit'));
  return { canView: source !== null, canEdit, source };
}

/**
 * The teams of the goal (its own and those in visible_entities) the caller is on, as their records say now. The
 * caller's team list (ctx.teams) is read from the index and may lag a membership change; a decision by uuid must
 * not (contract 14: a GET refuses a goal the caller can no longer see at once, and a team owner or member added a
 * moment ago may edit at once). So the goal's teams are read by key, strongly consistent (the request's loader),
 * and they decide, whenever they can decide something: a limited goal's visibility, or a writer's edit right
 * (team owner, or a team named with mode edit). Only a viewer's view of a public goal, which no team changes,
 * takes its `team` source from the list, and reads the records only when the list names one of the teams.
 */
async function goalTeamsOf(ctx: DomainCtx, goal: GoalRecord): Promise<Set<string>> {
  const teams = [
    ...new Set([...goal.team_uuids, ...goal.visible_entities.filter((e) => e.entity_type === 'team').map((e) => e.entity_uuid)]),
  ];
  if (!teams.length) return new Set();
  if (goal.visibility !== 'limited' && ctx.caller.role === 'viewer') {
    const listed = await ctx.teams();
    if (!teams.some((t) => listed.has(t))) return new Set();
  }
  const me = ctx.caller.userId;
  const records = await ctx.loader.many(teamEntity, teams);
  return new Set(records.filter((t) => t.status !== 'archived' && teamUserUuids(t).includes(me)).map((t) => t.uuid));
}

/** The principals a caller matches in a limited goal's ACL (`u:<user>`, `t:<team>`). */
export async function callerPrincipals(ctx: DomainCtx): Promise<Set<string>> {
  return new Set([`u:${ctx.caller.userId}`, ...[...(await ctx.teams())].map((t) => `t:${t}`)]);
}

/** List-time visibility from the index entry alone (vis/acl projected on GSI1): no item read needed. */
export async function goalEntryVisibility(ctx: DomainCtx): Promise<(e: ListEntry) => boolean> {
  if (isAdmin(ctx.caller)) return () => true;
  const principals = await callerPrincipals(ctx);
  return (e) => e.vis !== 'limited' || (e.acl ?? []).some((p) => principals.has(p));
}

/** 403 unless the caller can see the goal (`hidden` answers instead, e.g. a goal named in a body reads as unknown). */
export async function requireViewer(ctx: DomainCtx, goal: GoalRecord, hidden?: () => AppError): Promise<GoalAccess> {
  const access = await goalAccess(ctx, goal);
  const refusal = goalViewRefusal(access, hidden);
  if (refusal) throw refusal;
  return access;
}

/**
 * 403 unless the caller can see and change the goal (on a goal already read, e.g. inside a write's loop).
 * With `hidden`, a goal the caller cannot see answers that error instead: a goal referenced by a body field
 * (check-in, data source) must read exactly as an unknown one (422), never reveal that it exists.
 */
export async function requireGoalEditor(ctx: DomainCtx, goal: GoalRecord, hidden?: () => AppError): Promise<GoalAccess> {
  const access = await goalAccess(ctx, goal);
  const refusal = goalEditRefusal(access, hidden);
  if (refusal) throw refusal;
  return access;
}
