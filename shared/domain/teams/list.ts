import type { DomainCtx } from '#shared/domain/context.ts';
import { subteamsOf, teamEntity, teamMemberships, teamsWithMember, type TeamRecord } from '#shared/domain/teams/entity.ts';
import { listStart, type ListStart } from '#shared/list/start.ts';
import { runList } from '#shared/list/engine.ts';
import { type AttrDef, type ListResource, uuidAttr, entryIndex } from '#shared/list/resource.ts';

/** A team matches a `team_memberships_*` filter when any of its memberships does (contract section 4). */
const membershipAttr =
  (pick: (m: ReturnType<typeof teamMemberships>[number]) => unknown): AttrDef<TeamRecord>['get'] =>
  (t) =>
    teamMemberships(t).map(pick);

/** Filterable attributes of the spec's teams row; uuid, parent_uuid and team_memberships_user_uuid are index-served. */
export const teamListResource: ListResource<TeamRecord> = {
  type: 'team',
  entity: teamEntity,
  lists: ['team'],
  driverOrder: ['uuid', 'team_memberships_user_uuid', 'parent_uuid'],
  attributes: {
    uuid: uuidAttr(),
    name: { type: 'string', get: (t) => t.name },
    display_name: { type: 'string', get: (t) => t.display_name },
    parent_uuid: {
      type: 'string',
      get: (t) => t.parent_uuid,
      index: entryIndex(subteamsOf),
    },
    status: { type: 'string', get: (t) => t.status },
    is_org: { type: 'boolean', get: (t) => t.is_org },
    depth: { type: 'number', get: (t) => t.depth },
    created_at: { type: 'timestamp', get: (t) => t.created_at },
    team_memberships_uuid: { type: 'string', get: membershipAttr((m) => m.uuid) },
    team_memberships_user_uuid: {
      type: 'string',
      get: membershipAttr((m) => m.user_uuid),
      // the `member` entry list holds owners too, as memberships do
      index: entryIndex(teamsWithMember),
    },
    team_memberships_role: { type: 'string', get: membershipAttr((m) => m.role) },
  },
};

/** The list; started before the caller is known when the route starts it early (the list is the same for every caller). */
export function listTeams(start: ListStart<DomainCtx> | DomainCtx, pairs: Array<[string, string]>) {
  const { data, loader, ctx } = listStart(start);
  return runList(teamListResource, { ctx: data, loader, pairs, gate: ctx });
}
