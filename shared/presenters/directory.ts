/**
 * The directory resources (users, teams, labels, time periods): one presenter each, the record as every route
 * that returns it answers. Each returns its response schema's type (`Wire`), so a field it forgets fails the build.
 */
import type { z } from 'zod';
import type { LabelRecord } from '#shared/domain/labels/entity.ts';
import { teamMemberships, type TeamRecord } from '#shared/domain/teams/entity.ts';
import type { TimePeriodRecord } from '#shared/domain/time-periods/entity.ts';
import type { UserRecord } from '#shared/domain/users/entity.ts';
import type { LabelRecordSchema } from '#shared/schemas/labels.ts';
import type { TeamRecordSchema } from '#shared/schemas/teams.ts';
import type { TimePeriodRecordSchema } from '#shared/schemas/time-periods.ts';
import type { UserRecordSchema } from '#shared/schemas/users.ts';

type Wire<S extends z.ZodType> = z.infer<S>;

export const presentUser = (u: UserRecord): Wire<typeof UserRecordSchema> => ({
  uuid: u.uuid,
  email: u.email,
  display_name: u.display_name,
  account_id: u.account_id,
  status: u.status,
  role: u.role,
  manager_uuid: u.manager_uuid,
  path: u.path,
  creator_uuid: u.creator_uuid,
  license_type: u.license_type,
  display_name_source: u.display_name_source,
  avatar_url: u.avatar_url,
  external_employee_id: u.external_employee_id,
  profile_attributes: u.profile_attributes,
  created_at: u.created_at,
  updated_at: u.updated_at,
});

export const presentTeam = (t: TeamRecord): Wire<typeof TeamRecordSchema> => ({
  uuid: t.uuid,
  name: t.name,
  display_name: t.display_name,
  parent_uuid: t.parent_uuid,
  owner_uuids: t.owner_uuids,
  member_uuids: t.member_uuids,
  status: t.status,
  is_org: t.is_org,
  depth: t.depth,
  creator_uuid: t.creator_uuid,
  team_memberships: teamMemberships(t),
  created_at: t.created_at,
  updated_at: t.updated_at,
});

export const presentLabel = (l: LabelRecord): Wire<typeof LabelRecordSchema> => ({
  uuid: l.uuid,
  name: l.name,
  is_group: l.is_group,
  parent_uuid: l.parent_uuid,
  color: l.color,
  creator_uuid: l.creator_uuid,
  created_at: l.created_at,
  updated_at: l.updated_at,
});

export const presentTimePeriod = (p: TimePeriodRecord): Wire<typeof TimePeriodRecordSchema> => ({
  uuid: p.uuid,
  name: p.name,
  start_date: p.start_date,
  end_date: p.end_date,
  creator_uuid: p.creator_uuid,
  created_at: p.created_at,
  updated_at: p.updated_at,
});
