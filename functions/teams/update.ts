import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { teamAccessSource, teamChecks, updateTeam } from '#shared/domain/teams/service.ts';
import { presentTeam } from '#shared/presenters/directory.ts';
import { TeamUpdateBody } from '#shared/schemas/teams.ts';

export const handler = apiHandler({
  body: TeamUpdateBody,
  handle: async ({ ctx, params, body }) => {
    const team = await updateTeam(ctx, params.id!, body);
    return recordResponse(200, 'team', presentTeam(team), teamChecks(ctx, team), teamAccessSource(ctx, team));
  },
});
