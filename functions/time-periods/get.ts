import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { showTimePeriod, timePeriodAccessSource, timePeriodChecks } from '#shared/domain/time-periods/service.ts';
import { presentTimePeriod } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params }) => {
    const period = await showTimePeriod(ctx, params.id!);
    return recordResponse(200, 'time_period', presentTimePeriod(period), timePeriodChecks(ctx), timePeriodAccessSource(ctx));
  },
});
