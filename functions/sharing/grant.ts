import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { shareableChecks } from '#shared/domain/sharing/access.ts';
import { setGrant } from '#shared/domain/sharing/shareables.ts';
import { presentShareable } from '#shared/presenters/sharing.ts';
import { shareablePathOfRoute } from '#shared/domain/sharing/types.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/grant.ts').then((m) => m.GrantBody),
  handle: async ({ ctx, params, body, event }) => {
    const { record, access } = await setGrant(ctx, shareablePathOfRoute(event.routeKey), params.shareable_uuid!, body);
    // A manage grantee who revoked its own grant acted through that grant: say so, with every check now false.
    return recordResponse(
      200,
      record.type,
      presentShareable(record),
      shareableChecks(ctx.caller, access),
      access.source ?? 'visible_entity',
    );
  },
});
