import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { createTimePeriod, timePeriodAccessSource, timePeriodChecks } from '#shared/domain/time-periods/service.ts';
import { presentTimePeriod } from '#shared/presenters/directory.ts';
import { timePeriodCreateRefusal } from '#shared/domain/time-periods/decide.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/time-period-create.ts').then((m) => m.TimePeriodCreateBody),
  handle: async ({ ctx, body }) => {
    const period = await createTimePeriod(ctx, body);
    return recordResponse(201, 'time_period', presentTimePeriod(period), timePeriodChecks(ctx), timePeriodAccessSource(ctx));
  },
  authorizeReplay: ({ ctx }) => {
    const refusal = timePeriodCreateRefusal(ctx.caller);
    if (refusal) throw refusal;
  },
});
