import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listTeams } from '#shared/domain/teams/list.ts';
import { teamCollectionChecks } from '#shared/domain/teams/service.ts';
import { presentTeam } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  handle: async ({ ctx, query }) => {
    const result = await listTeams(ctx, query);
    return listResponse('team', result, result.records.map(presentTeam), teamCollectionChecks(ctx));
  },
});
