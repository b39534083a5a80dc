import { createHash } from 'node:crypto';
import { entryList } from '#shared/db/entry-lists.ts';
import { entry, type BaseRecord, type EntityDef } from '#shared/db/model.ts';

export const TEAM_STATUSES = ['active', 'archived'] as const;
export type TeamStatus = (typeof TEAM_STATUSES)[number];

export interface TeamRecord extends BaseRecord {
  name: string;
  display_name: string;
  parent_uuid: string | null;
  owner_uuids: string[];
  member_uuids: string[];
  status: TeamStatus;
  is_org: boolean;
  /** 0 for a root team; parent's depth + 1 otherwise. */
  depth: number;
  creator_uuid: string | null;
  /** The identity provider's id of the group (SCIM `externalId`), set by SCIM provisioning only; absent on older records. */
  scim_external_id?: string | null;
}

/** Users on a team in any capacity (owners count as members for visibility and filters). */
export const teamUserUuids = (t: TeamRecord) => [...new Set([...t.owner_uuids, ...t.member_uuids])];

/** Stable id of a (team, user) membership, so `team_memberships_uuid` filters have something to match. */
export function membershipUuid(teamUuid: string, userUuid: string): string {
  const h = createHash('sha1').update(`membership:${teamUuid}:${userUuid}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface TeamMembership {
  uuid: string;
  team_uuid: string;
  user_uuid: string;
  role: 'owner' | 'member';
}

export function teamMemberships(t: TeamRecord): TeamMembership[] {
  return teamUserUuids(t).map((user) => ({
    uuid: membershipUuid(t.uuid, user),
    team_uuid: t.uuid,
    user_uuid: user,
    role: t.owner_uuids.includes(user) ? 'owner' : 'member',
  }));
}

/** The sub-teams of a team (`team@parent#<team>`). */
export const subteamsOf = entryList('team', 'parent');
/** The teams a user is on, owners included (`team@member#<user>`). */
export const teamsWithMember = entryList('team', 'member');
/** The teams a user owns (`team@owner#<user>`). */
export const teamsWithOwner = entryList('team', 'owner');
/** The teams an identity provider knows by one SCIM `externalId` (`team@external_id#<id>`). */
export const teamsByExternalId = entryList('team', 'external_id');

export const teamEntity: EntityDef<TeamRecord> = {
  type: 'team',
  entries: (t) => [
    ...(t.parent_uuid ? [entry(subteamsOf, t.parent_uuid)] : []),
    ...teamUserUuids(t).map((u) => entry(teamsWithMember, u)),
    ...t.owner_uuids.map((u) => entry(teamsWithOwner, u)),
    ...(t.scim_external_id ? [entry(teamsByExternalId, t.scim_external_id)] : []),
  ],
  envelope: (t) => ({ state: t.status }),
};
