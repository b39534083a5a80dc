import * as z from 'zod';
import { TEAM_STATUSES } from '#shared/domain/teams/entity.ts';
import { listEnvelope, nonBlank, recordEnvelope, uuid } from '#shared/schemas/common.ts';

// A team's items (entity + one entry per member, per owner, parent) go in one transaction of at most 100
// items, so no list can usefully be longer; the service checks the exact total (contract 10 body).
const userUuids = z.array(uuid).max(100, 'must have at most 100 uuids');

const teamFields = {
  name: nonBlank(200),
  display_name: nonBlank(200),
  parent_uuid: uuid.nullable(),
  owner_uuids: userUuids,
  member_uuids: userUuids,
  status: z.enum(TEAM_STATUSES),
  is_org: z.boolean(),
};

/** Contract section 10: the body is the team itself, not wrapped (unlike users). */
export const TeamCreateBody = z
  .strictObject({
    name: teamFields.name,
    display_name: teamFields.display_name.optional().meta({ description: 'Defaults to name' }),
    parent_uuid: teamFields.parent_uuid.optional(),
    owner_uuids: teamFields.owner_uuids.optional(),
    member_uuids: teamFields.member_uuids.optional(),
    status: teamFields.status.optional(),
    is_org: teamFields.is_org.optional(),
  })
  .meta({ id: 'TeamCreateBody' });

/** Every field optional; `parent_uuid: null` makes the team a root team (admins only). */
export const TeamUpdateBody = TeamCreateBody.partial().meta({ id: 'TeamUpdateBody' });

export const TeamMembershipSchema = z
  .object({ uuid: z.string(), team_uuid: z.string(), user_uuid: z.string(), role: z.enum(['owner', 'member']) })
  .meta({ id: 'TeamMembership' });

export const TeamRecordSchema = z
  .object({
    uuid: z.string(),
    name: z.string(),
    display_name: z.string(),
    parent_uuid: z.string().nullable(),
    owner_uuids: z.array(z.string()),
    member_uuids: z.array(z.string()),
    status: z.enum(TEAM_STATUSES),
    is_org: z.boolean(),
    depth: z.number().int().meta({ description: '0 for a root team, parent depth + 1 otherwise' }),
    creator_uuid: z.string().nullable(),
    team_memberships: z.array(TeamMembershipSchema),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Team' });

export const TeamResponse = recordEnvelope('team', TeamRecordSchema);
export const TeamListResponse = listEnvelope('team', TeamRecordSchema);
