import { apiHandler } from '#shared/http/api.ts';
import { updateGoal } from '#shared/domain/goals/update.ts';
import { goalRecordResponse } from '#shared/presenters/goals.ts';
import { goalKindOf } from '#shared/routes/goal-kinds.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/goal-update.ts').then((m) => m.GoalUpdateBody),
  handle: async ({ ctx, params, body, event }) =>
    goalRecordResponse(ctx, 200, await updateGoal(ctx, goalKindOf(event.routeKey), params.id!, body)),
});
