import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listGoals } from '#shared/domain/goals/list.ts';
import { goalCollectionChecks, presentGoals } from '#shared/presenters/goals.ts';
import { goalKindOf } from '#shared/routes/goal-kinds.ts';

export const handler = apiHandler({
  handle: async ({ ctx, query, event }) => {
    const kind = goalKindOf(event.routeKey);
    const result = await listGoals(ctx, kind, query);
    return listResponse(kind, result, await presentGoals(ctx, result.records), goalCollectionChecks(ctx));
  },
});
