import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listTimePeriods } from '#shared/domain/time-periods/list.ts';
import { timePeriodCollectionChecks } from '#shared/domain/time-periods/service.ts';
import { presentTimePeriod } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  // the list starts alongside the caller's read (page 1: two round trips)
  early: ({ data, loader, ctx, query }) => listTimePeriods({ data, loader, ctx }, query),
  handle: async ({ ctx, early }) => {
    const result = await early;
    return listResponse('time_period', result, result.records.map(presentTimePeriod), timePeriodCollectionChecks(ctx));
  },
});
