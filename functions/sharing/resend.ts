import { apiHandler, json } from '#shared/http/api.ts';
import { resendAccessRequest } from '#shared/domain/sharing/requests.ts';
import { shareablePathOfRoute } from '#shared/domain/sharing/types.ts';
import { ResendBody } from '#shared/schemas/sharing.ts';

export const handler = apiHandler({
  body: ResendBody,
  handle: async ({ ctx, params, event }) => json(200, await resendAccessRequest(ctx, shareablePathOfRoute(event.routeKey), params.shareable_uuid!)),
});
