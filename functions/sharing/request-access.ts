import { apiHandler, json } from '#shared/http/api.ts';
import { requestAccess } from '#shared/domain/sharing/requests.ts';
import { presentAccessRequest } from '#shared/presenters/sharing.ts';
import { shareablePathOfRoute } from '#shared/domain/sharing/types.ts';
import { loadShareable } from '#shared/domain/sharing/load-shareable.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/access-request.ts').then((m) => m.AccessRequestBody),
  handle: async ({ ctx, params, body, event }) => {
    const { record, outcome } = await requestAccess(ctx, shareablePathOfRoute(event.routeKey), params.shareable_uuid!, body);
    return json(200, { data: { type: 'access_request', record: record && presentAccessRequest(record), outcome } });
  },
  // any user of the tenant may ask (or ask again) for access: the resource must still be there
  authorizeReplay: ({ ctx, params, event }) => loadShareable(ctx, shareablePathOfRoute(event.routeKey), params.shareable_uuid!),
});
