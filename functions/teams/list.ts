import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listTeams } from '#shared/domain/teams/list.ts';
import { teamCollectionChecks } from '#shared/domain/teams/service.ts';
import { presentTeam } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  // the list starts alongside the caller's read (page 1: two round trips)
  early: ({ data, loader, ctx, query }) => listTeams({ data, loader, ctx }, query),
  handle: async ({ ctx, early }) => {
    const result = await early;
    return listResponse('team', result, result.records.map(presentTeam), teamCollectionChecks(ctx));
  },
});
