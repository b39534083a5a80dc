import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { historyGoalKindOf } from '#shared/routes/goal-kinds.ts';
import { listHistory } from '#shared/domain/history/service.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params, query, event }) => {
    const { result } = await listHistory(ctx, historyGoalKindOf(event.routeKey), params.id!, query);
    return listResponse('history', result, result.records, {});
  },
});
