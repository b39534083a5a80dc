import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { timePeriodAccessSource, timePeriodChecks, updateTimePeriod } from '#shared/domain/time-periods/service.ts';
import { presentTimePeriod } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/time-period-update.ts').then((m) => m.TimePeriodUpdateBody),
  handle: async ({ ctx, params, body }) => {
    const period = await updateTimePeriod(ctx, params.id!, body);
    return recordResponse(200, 'time_period', presentTimePeriod(period), timePeriodChecks(ctx), timePeriodAccessSource(ctx));
  },
});
