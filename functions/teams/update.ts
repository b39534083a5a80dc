import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { teamAccessSource, teamChecks, updateTeam } from '#shared/domain/teams/service.ts';
import { presentTeam } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/team-update.ts').then((m) => m.TeamUpdateBody),
  handle: async ({ ctx, params, body }) => {
    const team = await updateTeam(ctx, params.id!, body);
    return recordResponse(200, 'team', presentTeam(team), teamChecks(ctx, team), teamAccessSource(ctx, team));
  },
});
