import { apiHandler, json } from '#shared/http/api.ts';
import { deleteGoal } from '#shared/domain/goals/service.ts';
import { presentOne } from '#shared/presenters/goals.ts';
import { goalKindOf } from '#shared/routes/goals.ts';
import { GoalDeleteBody } from '#shared/schemas/goals.ts';

// Contract 2: a goal delete answers 200 with the flat goal record (discarded_at/discarded_by_uuid set).
export const handler = apiHandler({
  body: GoalDeleteBody,
  handle: async ({ ctx, params, body, event }) => json(200, await presentOne(ctx, await deleteGoal(ctx, goalKindOf(event.routeKey), params.id!, body))),
});
