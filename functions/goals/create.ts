import { apiHandler } from '#shared/http/api.ts';
import { createGoal, readCreateBatch } from '#shared/domain/goals/create.ts';
import type { GoalCreateCommand } from '#shared/domain/goals/commands.ts';
import { goalRecordResponse } from '#shared/presenters/goals.ts';
import { goalKindOf } from '#shared/routes/goal-kinds.ts';
import { authorizeGoalCreate } from '#shared/domain/goals/create.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/goal-create.ts').then((m) => m.GoalCreateBody),
  // the create's one batch is read beside the caller's read (the body is the one `handle` gets, validated)
  early: async ({ data, body }) => readCreateBatch(data, (await body()) as GoalCreateCommand),
  handle: async ({ ctx, body, event, early }) =>
    goalRecordResponse(ctx, 201, await createGoal(ctx, goalKindOf(event.routeKey), body, { started: early })),
  authorizeReplay: ({ ctx, body }) => authorizeGoalCreate(ctx, body),
});
