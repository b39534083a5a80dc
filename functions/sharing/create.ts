import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { shareableChecks } from '#shared/domain/sharing/access.ts';
import { createShareable } from '#shared/domain/sharing/shareables.ts';
import { presentShareable } from '#shared/presenters/sharing.ts';
import { shareablePathOfRoute } from '#shared/domain/sharing/types.ts';
import { shareableCreateRefusal } from '#shared/domain/sharing/decide.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/shareable-create.ts').then((m) => m.ShareableCreateBody),
  handle: async ({ ctx, body, event }) => {
    const { record, access } = await createShareable(ctx, shareablePathOfRoute(event.routeKey), body);
    return recordResponse(201, record.type, presentShareable(record), shareableChecks(ctx.caller, access), access.source!);
  },
  authorizeReplay: ({ ctx }) => {
    const refusal = shareableCreateRefusal(ctx.caller);
    if (refusal) throw refusal;
  },
});
