import * as z from 'zod';
import { TEAM_STATUSES } from '#shared/domain/teams/entity.ts';
import { listEnvelope, recordEnvelope } from '#shared/schemas/common.ts';

/** The team bodies are built in shared/schemas/bodies/team-*.ts (a handler loads its own on first use); re-exported for the route table. */
export { TeamCreateBody } from '#shared/schemas/bodies/team-create.ts';
export { TeamUpdateBody } from '#shared/schemas/bodies/team-update.ts';

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
