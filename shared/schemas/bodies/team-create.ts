import * as z from 'zod';
import { TEAM_STATUSES } from '#shared/domain/teams/entity.ts';
import { nonBlank, uuid } from '#shared/schemas/bodies/fields.ts';

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
