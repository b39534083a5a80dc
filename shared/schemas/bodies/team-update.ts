import { TeamCreateBody } from '#shared/schemas/bodies/team-create.ts';

/** Every field optional; `parent_uuid: null` makes the team a root team (admins only). */
export const TeamUpdateBody = TeamCreateBody.partial().meta({ id: 'TeamUpdateBody' });
