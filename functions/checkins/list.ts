import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listCheckins } from '#shared/domain/checkins/list.ts';
import { checkinCollectionChecks, presentCheckins } from '#shared/presenters/checkins.ts';

export const handler = apiHandler({
  // the caller's teams (which goals a member may see) are read with the caller, and the list starts alongside
  readAhead: () => ({ teams: true }),
  early: ({ data, loader, ctx, query }) => listCheckins({ data, loader, ctx }, query),
  handle: async ({ ctx, early }) => {
    const result = await early;
    return listResponse('checkin', result, await presentCheckins(ctx, result.records), checkinCollectionChecks(ctx));
  },
});
