import { apiHandler, json } from '#shared/http/api.ts';
import { deleteCheckin } from '#shared/domain/checkins/service.ts';
import { presentCheckin } from '#shared/presenters/checkins.ts';

// Like update (and like a goal delete), the flat record: the check-in as it was when deleted.
export const handler = apiHandler({
  handle: async ({ ctx, params }) => json(200, await presentCheckin(ctx, (await deleteCheckin(ctx, params.id!)).checkin)),
});
