import { pushValue } from '#shared/domain/integrations/sync.ts';
import { pushHandler } from '#shared/http/push-handler.ts';
import { checkinRecordResponse } from '#shared/presenters/checkins.ts';

/**
 * POST /data_sources/{id}/values: no JWT (the route has no gateway authorizer); the push secret is the
 * credential, checked by pushHandler. 201 with the check-in written by the source's creator.
 */
export const handler = pushHandler({
  body: () => import('#shared/schemas/bodies/data-source-push.ts').then((m) => m.DataSourcePushBody),
  handle: async ({ ctx, body, source }) => checkinRecordResponse(ctx, 201, await pushValue(ctx, source, body)),
});
