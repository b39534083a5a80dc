import { apiHandler, json } from '#shared/http/api.ts';
import { resendAccessRequest } from '#shared/domain/sharing/requests.ts';
import { shareablePathOfRoute } from '#shared/domain/sharing/types.ts';

// No body schema: the row documents ResendBody, an empty strict object, which is what apiHandler checks a body
// of a route without one against (NO_BODY), loaded only when a body arrives.
export const handler = apiHandler({
  handle: async ({ ctx, params, event }) => json(200, await resendAccessRequest(ctx, shareablePathOfRoute(event.routeKey), params.shareable_uuid!)),
});
