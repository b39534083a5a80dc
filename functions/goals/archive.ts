import { apiHandler } from '#shared/http/api.ts';
import { setArchived } from '#shared/domain/goals/archive.ts';
import { goalRecordResponse } from '#shared/presenters/goals.ts';
import { goalKindOf } from '#shared/routes/goal-kinds.ts';
import { authorizeSetArchived } from '#shared/domain/goals/archive.ts';

// No body schema: the row documents GoalNoBody, an empty strict object, which is what apiHandler checks a body
// of a route without one against (NO_BODY), loaded only when a body arrives.
export const handler = apiHandler({
  handle: async ({ ctx, params, event }) =>
    goalRecordResponse(ctx, 200, await setArchived(ctx, goalKindOf(event.routeKey), params.id!, true)),
  authorizeReplay: ({ ctx, params, event }) => authorizeSetArchived(ctx, goalKindOf(event.routeKey), params.id!),
});
