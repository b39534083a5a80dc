import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { shareableChecks } from '#shared/domain/sharing/access.ts';
import { getShareable } from '#shared/domain/sharing/shareables.ts';
import { presentShareable } from '#shared/presenters/sharing.ts';
import { shareablePathOfRoute } from '#shared/domain/sharing/types.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params, event }) => {
    const { record, access } = await getShareable(ctx, shareablePathOfRoute(event.routeKey), params.shareable_uuid!);
    return recordResponse(200, record.type, presentShareable(record), shareableChecks(ctx.caller, access), access.source!);
  },
});
