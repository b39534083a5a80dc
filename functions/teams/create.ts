import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { createTeam, teamAccessSource, teamChecks } from '#shared/domain/teams/service.ts';
import { presentTeam } from '#shared/presenters/directory.ts';
import { teamCreateRefusal } from '#shared/domain/teams/decide.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/team-create.ts').then((m) => m.TeamCreateBody),
  handle: async ({ ctx, body }) => {
    const team = await createTeam(ctx, body);
    return recordResponse(201, 'team', presentTeam(team), teamChecks(ctx, team), teamAccessSource(ctx, team));
  },
  authorizeReplay: ({ ctx }) => {
    const refusal = teamCreateRefusal(ctx.caller);
    if (refusal) throw refusal;
  },
});
