import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listCheckins } from '#shared/domain/checkins/list.ts';
import { checkinCollectionChecks, presentCheckins } from '#shared/presenters/checkins.ts';

export const handler = apiHandler({
  handle: async ({ ctx, query }) => {
    const result = await listCheckins(ctx, query);
    return listResponse('checkin', result, await presentCheckins(ctx, result.records), checkinCollectionChecks(ctx));
  },
});
