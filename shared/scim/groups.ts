/**
 * SCIM Groups (RFC 7643 section 4.2) over this service's teams, through the team commands REST uses
 * (shared/domain/teams/service.ts). displayName is the team's name, externalId the identity provider's id
 * (indexed), members the team's owners and members: a member the group drops loses the team either way, one it
 * adds joins as a member. DELETE deletes the team (refused, 409, while goals or active sub-teams use it).
 */
import type { DomainCtx } from '#shared/domain/context.ts';
import { teamUserUuids, type TeamRecord } from '#shared/domain/teams/entity.ts';
import { createTeam, deleteTeam, findTeamsByExternalId, getTeam, updateTeam } from '#shared/domain/teams/service.ts';
import { listTeams } from '#shared/domain/teams/list.ts';
import { userEntity, type UserRecord } from '#shared/domain/users/entity.ts';
import { listResponse, pageOf, slice, walk } from '#shared/scim/lists.ts';
import { applyPatch, type PatchOperation } from '#shared/scim/patch.ts';
import { compare, listQuery, parseScimFilter, type ScimFilter } from '#shared/scim/query.ts';
import { GROUP_URN, projectAttributes, toScimGroup } from '#shared/scim/resources.ts';
import type { ScimGroupInput } from '#shared/schemas/bodies/scim.ts';

const FILTERABLE = ['displayName', 'externalId'] as const;

/** The members' user records (for `display`), read in one batch for every group of the answer. */
async function presentGroups(ctx: DomainCtx, teams: TeamRecord[], params: ReadonlyMap<string, string>) {
  const shown = teams.map((t) => projectAttributes(toScimGroup(t, new Map()), params));
  if (!shown.some((g) => g.members?.length)) return shown;
  const users = new Map<string, UserRecord>(
    (await ctx.loader.many(userEntity, [...new Set(teams.flatMap((t) => [...t.owner_uuids, ...t.member_uuids]))])).map((u) => [u.uuid, u]),
  );
  return teams.map((t) => projectAttributes(toScimGroup(t, users), params));
}

async function teamsMatching(ctx: DomainCtx, f: ScimFilter): Promise<TeamRecord[]> {
  if (f.op === 'eq' && f.attr === 'externalId') return findTeamsByExternalId(ctx, f.value);
  const caseExact = f.attr === 'externalId';
  return walk(ctx, listTeams, (t) => compare(f.attr === 'displayName' ? t.name : t.scim_external_id, f, caseExact));
}

export async function listScimGroups(ctx: DomainCtx, pairs: Array<[string, string]>) {
  const { params, page } = listQuery(pairs);
  const raw = params.get('filter');
  const found = raw
    ? slice(await teamsMatching(ctx, parseScimFilter(raw, GROUP_URN, FILTERABLE)), page)
    : await pageOf(ctx, listTeams, page);
  return listResponse(found.total, page, await presentGroups(ctx, found.records, params));
}

export async function getScimGroup(ctx: DomainCtx, id: string, pairs: Array<[string, string]>) {
  const [shown] = await presentGroups(ctx, [await getTeam(ctx, id)], listQuery(pairs).params);
  return shown!;
}

const memberIds = (input: ScimGroupInput) => [...new Set((input.members ?? []).map((m) => m.value.toLowerCase()))];

export async function createScimGroup(ctx: DomainCtx, input: ScimGroupInput) {
  const team = await createTeam(ctx, {
    name: input.displayName,
    member_uuids: memberIds(input),
    ...(input.externalId ? { scim_external_id: input.externalId } : {}),
  });
  return (await presentGroups(ctx, [team], new Map()))[0]!;
}

/** The team as `input` says: its name, external id, and owners and members being exactly the group's members. */
function replacement(team: TeamRecord, input: ScimGroupInput) {
  const members = memberIds(input);
  const owners = team.owner_uuids.filter((u) => members.includes(u));
  return {
    name: input.displayName,
    // a display name never set apart from the name follows it
    ...(team.display_name === team.name ? { display_name: input.displayName } : {}),
    scim_external_id: input.externalId ?? null,
    owner_uuids: owners,
    member_uuids: members.filter((u) => !owners.includes(u)),
  };
}

export async function replaceScimGroup(ctx: DomainCtx, id: string, input: ScimGroupInput) {
  const team = await updateTeam(ctx, id, replacement(await getTeam(ctx, id), input));
  return (await presentGroups(ctx, [team], new Map()))[0]!;
}

/**
 * Members as PATCH sees them: `{ value }` only. scim-patch removes the values an operation lists by deep equality,
 * and Entra ID lists `{ "$ref": null, "value": id }`, Okta `{ value, display }`: both are read as their `value`.
 */
const memberValues = (op: PatchOperation): PatchOperation =>
  op.path?.trim().toLowerCase() === 'members' && Array.isArray(op.value)
    ? {
        ...op,
        value: op.value.map((m: unknown) =>
          m !== null && typeof m === 'object' && typeof (m as { value?: unknown }).value === 'string'
            ? { value: (m as { value: string }).value.toLowerCase() }
            : m,
        ),
      }
    : op;

/** PATCH (Okta and Entra ID change members this way): the operations on the group as SCIM shows it, then written as a PUT. */
export async function patchScimGroup(ctx: DomainCtx, id: string, ops: PatchOperation[], validate: (body: unknown) => ScimGroupInput) {
  const current = await getTeam(ctx, id);
  const shown = { ...toScimGroup(current, new Map()), members: teamUserUuids(current).map((value) => ({ value })) };
  const patched = validate(applyPatch(shown, ops.map(memberValues)));
  const team = await updateTeam(ctx, id, replacement(current, patched));
  return (await presentGroups(ctx, [team], new Map()))[0]!;
}

export async function deleteScimGroup(ctx: DomainCtx, id: string): Promise<void> {
  await deleteTeam(ctx, id);
}
