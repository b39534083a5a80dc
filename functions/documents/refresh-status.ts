import { apiHandler, json } from '#shared/http/api.ts';
import { presentRefreshStatus, refreshStatus } from '#shared/domain/documents/refresh.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params }) => json(200, presentRefreshStatus(await refreshStatus(ctx, params.thread_uuid!))),
});
