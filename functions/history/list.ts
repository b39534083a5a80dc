import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { kindOfRoute } from '#shared/domain/goals/route.ts';
import { listHistory } from '#shared/domain/history/service.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params, query, event }) => {
    const { result } = await listHistory(ctx, kindOfRoute(event.routeKey), params.id!, query);
    return listResponse('history', result, result.records, {});
  },
});
