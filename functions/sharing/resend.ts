import { apiHandler, json } from '#shared/http/api.ts';
import { resendAccessRequest } from '#shared/domain/sharing/requests.ts';
import { shareablePathOfRoute } from '#shared/domain/sharing/types.ts';
import { loadShareable } from '#shared/domain/sharing/load-shareable.ts';

// No body schema: the row documents ResendBody, an empty strict object, which is what apiHandler checks a body
// of a route without one against (NO_BODY), loaded only when a body arrives.
export const handler = apiHandler({
  handle: async ({ ctx, params, event }) =>
    json(200, await resendAccessRequest(ctx, shareablePathOfRoute(event.routeKey), params.shareable_uuid!)),
  // any user of the tenant may ask (or ask again) for access: the resource must still be there
  authorizeReplay: ({ ctx, params, event }) => loadShareable(ctx, shareablePathOfRoute(event.routeKey), params.shareable_uuid!),
});
