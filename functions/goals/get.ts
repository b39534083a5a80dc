import { apiHandler } from '#shared/http/api.ts';
import { getGoal } from '#shared/domain/goals/service.ts';
import { goalRecordResponse } from '#shared/domain/goals/present.ts';
import { goalReadAhead } from '#shared/domain/goals/reads.ts';
import { kindOfRoute } from '#shared/domain/goals/route.ts';

export const handler = apiHandler({
  readAhead: goalReadAhead,
  handle: async ({ ctx, params, event }) => goalRecordResponse(ctx, 200, await getGoal(ctx, kindOfRoute(event.routeKey), params.id!)),
});
