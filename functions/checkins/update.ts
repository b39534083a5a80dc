import { apiHandler, json } from '#shared/http/api.ts';
import { updateCheckin } from '#shared/domain/checkins/service.ts';
import { collectSignals } from '#shared/signals.ts';
import { emitMetrics } from '#shared/observability/emit.ts';
import { presentCheckin } from '#shared/presenters/checkins.ts';

// The spec's update answers the flat check-in record, not the data wrapper (contract section 2).
export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/checkin-update.ts').then((m) => m.CheckinUpdateBody),
  handle: async ({ ctx, params, body }) => {
    const { value: view, signals } = await collectSignals(() => updateCheckin(ctx, params.id!, body));
    await emitMetrics({ RollupDepth: signals.rollupDepth });
    return json(200, await presentCheckin(ctx, view.checkin));
  },
});
