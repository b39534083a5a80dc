import { apiHandler } from '#shared/http/api.ts';
import { historyGoalKindOf } from '#shared/routes/goal-kinds.ts';
import { progressChartSvg } from '#shared/domain/history/chart.ts';
import { chartData } from '#shared/domain/history/service.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params, event }) => {
    const { goal, points } = await chartData(ctx, historyGoalKindOf(event.routeKey), params.id!);
    return {
      statusCode: 200,
      headers: { 'content-type': 'image/svg+xml; charset=utf-8', 'cache-control': 'private, max-age=60' },
      body: progressChartSvg(goal, points, new Date()),
    };
  },
});
