import { apiHandler } from '#shared/http/api.ts';
import { getCheckin } from '#shared/domain/checkins/service.ts';
import { checkinRecordResponse } from '#shared/presenters/checkins.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params }) => checkinRecordResponse(ctx, 200, await getCheckin(ctx, params.id!)),
});
