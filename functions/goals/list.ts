import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listGoals } from '#shared/domain/goals/list.ts';
import { goalCollectionChecks, presentGoals } from '#shared/presenters/goals.ts';
import { goalKindOf } from '#shared/routes/goal-kinds.ts';

export const handler = apiHandler({
  // the caller's teams (what a member may see) are read with the caller, and the list starts alongside
  readAhead: () => ({ teams: true }),
  early: ({ data, loader, ctx, query, event }) => listGoals({ data, loader, ctx }, goalKindOf(event.routeKey), query),
  handle: async ({ ctx, early, event }) => {
    const result = await early;
    return listResponse(goalKindOf(event.routeKey), result, await presentGoals(ctx, result.records), goalCollectionChecks(ctx));
  },
});
