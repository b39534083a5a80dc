import { apiHandler } from '#shared/http/api.ts';
import { createCheckin, readCheckinGoal, type CheckinCreateInput } from '#shared/domain/checkins/service.ts';
import { collectSignals } from '#shared/signals.ts';
import { emitMetrics } from '#shared/observability/emit.ts';
import { checkinRecordResponse } from '#shared/presenters/checkins.ts';
import { requireNamedGoalEditor } from '#shared/domain/goals/reads.ts';
import { unknownGoal } from '#shared/domain/checkins/service.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/checkin-create.ts').then((m) => m.CheckinCreateBody),
  // the goal and the label names are read beside the caller's read (the body is the one `handle` gets, validated)
  early: async ({ data, loader, body }) => readCheckinGoal(data, loader, (await body()) as CheckinCreateInput),
  handle: async ({ ctx, body, early }) => {
    const { value: view, signals } = await collectSignals(() => createCheckin(ctx, body, { started: early }));
    await emitMetrics({ CheckinsWritten: 1, RollupDepth: signals.rollupDepth });
    return checkinRecordResponse(ctx, 201, view);
  },
  authorizeReplay: ({ ctx, body }) => requireNamedGoalEditor(ctx, body.goal_uuid, () => unknownGoal(body.goal_uuid)),
});
