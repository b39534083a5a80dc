import { apiHandler } from '#shared/http/api.ts';
import { createCheckin } from '#shared/domain/checkins/service.ts';
import { checkinRecordResponse } from '#shared/presenters/checkins.ts';
import { CheckinCreateBody } from '#shared/schemas/checkins.ts';

export const handler = apiHandler({
  body: CheckinCreateBody,
  handle: async ({ ctx, body }) => checkinRecordResponse(ctx, 201, await createCheckin(ctx, body)),
});
