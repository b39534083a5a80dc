import { apiHandler } from '#shared/http/api.ts';
import { createGoal } from '#shared/domain/goals/service.ts';
import { goalRecordResponse } from '#shared/presenters/goals.ts';
import { goalKindOf } from '#shared/routes/goals.ts';
import { GoalCreateBody } from '#shared/schemas/goals.ts';

export const handler = apiHandler({
  body: GoalCreateBody,
  handle: async ({ ctx, body, event }) => goalRecordResponse(ctx, 201, await createGoal(ctx, goalKindOf(event.routeKey), body)),
});
