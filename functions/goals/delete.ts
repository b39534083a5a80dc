import { apiHandler, json } from '#shared/http/api.ts';
import { deleteGoal } from '#shared/domain/goals/delete.ts';
import { presentOne } from '#shared/presenters/goals.ts';
import { goalKindOf } from '#shared/routes/goal-kinds.ts';

// Contract 2: a goal delete answers 200 with the flat goal record (discarded_at/discarded_by_uuid set).
export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/goal-delete.ts').then((m) => m.GoalDeleteBody),
  handle: async ({ ctx, params, body, event }) =>
    json(200, await presentOne(ctx, await deleteGoal(ctx, goalKindOf(event.routeKey), params.id!, body))),
});
