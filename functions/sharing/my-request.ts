import { apiHandler, json } from '#shared/http/api.ts';
import { myPendingRequest } from '#shared/domain/sharing/requests.ts';
import { presentAccessRequest } from '#shared/presenters/sharing.ts';
import { shareablePathOfRoute } from '#shared/domain/sharing/types.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params, event }) => {
    const record = await myPendingRequest(ctx, shareablePathOfRoute(event.routeKey), params.shareable_uuid!);
    return json(200, { data: { type: 'access_request', record: record && presentAccessRequest(record) } });
  },
});
