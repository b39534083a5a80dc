import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listTimePeriods } from '#shared/domain/time-periods/list.ts';
import { timePeriodCollectionChecks } from '#shared/domain/time-periods/service.ts';
import { presentTimePeriod } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  handle: async ({ ctx, query }) => {
    const result = await listTimePeriods(ctx, query);
    return listResponse('time_period', result, result.records.map(presentTimePeriod), timePeriodCollectionChecks(ctx));
  },
});
