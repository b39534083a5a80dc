import { apiHandler } from '#shared/http/api.ts';
import { getGoal } from '#shared/domain/goals/service.ts';
import { goalReadAhead } from '#shared/domain/goals/reads.ts';
import { goalRecordResponse } from '#shared/presenters/goals.ts';
import { goalKindOf } from '#shared/routes/goal-kinds.ts';

export const handler = apiHandler({
  readAhead: goalReadAhead,
  handle: async ({ ctx, params, event }) => goalRecordResponse(ctx, 200, await getGoal(ctx, goalKindOf(event.routeKey), params.id!)),
});
