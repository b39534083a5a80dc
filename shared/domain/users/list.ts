import { entriesOf } from '#shared/db/index-queries.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { teamEntity, teamMemberships, teamsWithMember, teamUserUuids, type TeamRecord } from '#shared/domain/teams/entity.ts';
import { PROFILE_FILTERABLE, reportsOf, userEntity, type UserRecord } from '#shared/domain/users/entity.ts';
import { listStart, type ListStart } from '#shared/list/start.ts';
import { runList } from '#shared/list/engine.ts';
import { type AttrDef, type ListResource, uuidAttr, entryIndex } from '#shared/list/resource.ts';
import type { Loader } from '#shared/list/entity-cache.ts';

/** Per request (loader): user uuid → the user's teams, so several team filters on one user read its memberships once. */
const teamsByUser = new WeakMap<Loader, Map<string, Promise<TeamRecord[]>>>();

/** Teams the user belongs to (owner or member), from the team entry list `team@member#<user>`. */
function teamsOf(ctx: DataCtx, loader: Loader, userUuid: string): Promise<TeamRecord[]> {
  let cache = teamsByUser.get(loader);
  if (!cache) teamsByUser.set(loader, (cache = new Map()));
  let teams = cache.get(userUuid);
  if (!teams) {
    teams = (async () => {
      const ids: string[] = [];
      for await (const e of entriesOf(ctx, teamsWithMember, userUuid)) ids.push(e.id);
      return loader.many(teamEntity, ids);
    })();
    cache.set(userUuid, teams);
  }
  return teams;
}

const teamAttrs = (prefix: string): Record<string, AttrDef<UserRecord>> => {
  const of = (pick: (t: TeamRecord) => unknown) => async (u: UserRecord, l: Loader) => (await teamsOf(l.ctx, l, u.uuid)).map(pick);
  return {
    [`${prefix}_uuid`]: {
      type: 'string',
      get: of((t) => t.uuid),
      // users on the named teams: read each team once, then the users by id
      index: async (values, env) => ({ ids: (await env.loader.many(teamEntity, values as string[])).flatMap(teamUserUuids) }),
    },
    [`${prefix}_name`]: { type: 'string', get: of((t) => t.name) },
    [`${prefix}_display_name`]: { type: 'string', get: of((t) => t.display_name) },
    [`${prefix}_parent_uuid`]: { type: 'string', get: of((t) => t.parent_uuid) },
    [`${prefix}_status`]: { type: 'string', get: of((t) => t.status) },
    [`${prefix}_is_org`]: { type: 'boolean', get: of((t) => t.is_org) },
    [`${prefix}_depth`]: { type: 'number', get: of((t) => t.depth) },
  };
};

const membershipsOf = async (u: UserRecord, l: Loader) =>
  (await teamsOf(l.ctx, l, u.uuid)).flatMap(teamMemberships).filter((m) => m.user_uuid === u.uuid);

const managerAttr =
  (pick: (m: UserRecord) => unknown): AttrDef<UserRecord>['get'] =>
  async (u, l) => {
    const m = await l.one(userEntity, u.manager_uuid);
    return m ? pick(m) : null;
  };

export const userListResource: ListResource<UserRecord> = {
  type: 'user',
  entity: userEntity,
  lists: ['user'],
  driverOrder: ['uuid', 'manager_uuid', 'direct_teams_uuid', 'teams_uuid', 'team_memberships_team_uuid'],
  attributes: {
    uuid: uuidAttr(),
    display_name: { type: 'string', get: (u) => u.display_name },
    email: { type: 'string', get: (u) => u.email },
    status: { type: 'string', get: (u) => u.status },
    role: { type: 'string', get: (u) => u.role },
    manager_uuid: {
      type: 'string',
      get: (u) => u.manager_uuid,
      index: entryIndex(reportsOf),
    },
    license_type: { type: 'string', get: (u) => u.license_type },
    created_at: { type: 'timestamp', get: (u) => u.created_at },
    ...teamAttrs('direct_teams'),
    ...teamAttrs('teams'), // earlier variant of direct_teams
    team_memberships_uuid: { type: 'string', get: async (u, l) => (await membershipsOf(u, l)).map((m) => m.uuid) },
    team_memberships_user_uuid: { type: 'string', get: async (u, l) => (await membershipsOf(u, l)).map((m) => m.user_uuid) },
    team_memberships_team_uuid: {
      type: 'string',
      get: async (u, l) => (await membershipsOf(u, l)).map((m) => m.team_uuid),
      index: async (values, env) => ({ ids: (await env.loader.many(teamEntity, values as string[])).flatMap(teamUserUuids) }),
    },
    team_memberships_role: { type: 'string', get: async (u, l) => (await membershipsOf(u, l)).map((m) => m.role) },
    ...Object.fromEntries(
      PROFILE_FILTERABLE.map((k) => [
        `profile_${k}`,
        { type: 'string', get: (u: UserRecord) => u.profile_attributes[k] ?? null } satisfies AttrDef<UserRecord>,
      ]),
    ),
    manager_display_name: { type: 'string', get: managerAttr((m) => m.display_name) },
    manager_status: { type: 'string', get: managerAttr((m) => m.status) },
    manager_manager_uuid: { type: 'string', get: managerAttr((m) => m.manager_uuid) },
    manager_license_type: { type: 'string', get: managerAttr((m) => m.license_type) },
    manager_email: { type: 'string', get: managerAttr((m) => m.email) },
  },
};

/** The list; started before the caller is known when the route starts it early (the list is the same for every caller). */
export function listUsers(start: ListStart<DomainCtx> | DomainCtx, pairs: Array<[string, string]>) {
  const { data, loader, ctx } = listStart(start);
  return runList(userListResource, { ctx: data, loader, pairs, gate: ctx });
}
