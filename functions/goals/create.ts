import { apiHandler } from '#shared/http/api.ts';
import { createGoal } from '#shared/domain/goals/create.ts';
import { goalRecordResponse } from '#shared/presenters/goals.ts';
import { goalKindOf } from '#shared/routes/goal-kinds.ts';
import { authorizeGoalCreate } from '#shared/domain/goals/create.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/goal-create.ts').then((m) => m.GoalCreateBody),
  handle: async ({ ctx, body, event }) => goalRecordResponse(ctx, 201, await createGoal(ctx, goalKindOf(event.routeKey), body)),
  authorizeReplay: ({ ctx, body }) => authorizeGoalCreate(ctx, body),
});
