import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { getTeam, teamAccessSource, teamChecks } from '#shared/domain/teams/service.ts';
import { presentTeam } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params }) => {
    const team = await getTeam(ctx, params.id!);
    return recordResponse(200, 'team', presentTeam(team), teamChecks(ctx, team), teamAccessSource(ctx, team));
  },
});
