import { apiHandler } from '#shared/http/api.ts';
import { setArchived } from '#shared/domain/goals/service.ts';
import { goalRecordResponse } from '#shared/presenters/goals.ts';
import { goalKindOf } from '#shared/routes/goals.ts';
import { GoalNoBody } from '#shared/schemas/goals.ts';

export const handler = apiHandler({
  body: GoalNoBody,
  handle: async ({ ctx, params, event }) => goalRecordResponse(ctx, 200, await setArchived(ctx, goalKindOf(event.routeKey), params.id!, true)),
});
