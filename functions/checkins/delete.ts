import { apiHandler, json } from '#shared/http/api.ts';
import { deleteCheckin } from '#shared/domain/checkins/service.ts';
import { collectSignals } from '#shared/signals.ts';
import { emitMetrics } from '#shared/observability/emit.ts';
import { presentCheckin } from '#shared/presenters/checkins.ts';

// Like update (and like a goal delete), the flat record: the check-in as it was when deleted.
export const handler = apiHandler({
  handle: async ({ ctx, params }) => {
    const { value: view, signals } = await collectSignals(() => deleteCheckin(ctx, params.id!));
    await emitMetrics({ RollupDepth: signals.rollupDepth });
    return json(200, await presentCheckin(ctx, view.checkin));
  },
});
