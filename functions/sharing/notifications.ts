import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listMyNotifications } from '#shared/domain/sharing/notifications.ts';
import { presentNotification } from '#shared/presenters/sharing.ts';

export const handler = apiHandler({
  handle: async ({ ctx, query }) => {
    const result = await listMyNotifications(ctx, query);
    return listResponse('notification', result, result.records.map(presentNotification), {});
  },
});
