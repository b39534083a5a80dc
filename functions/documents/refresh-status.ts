import { apiHandler, json } from '#shared/http/api.ts';
import { refreshStatus } from '#shared/domain/documents/refresh.ts';
import { presentRefreshStatus } from '#shared/presenters/documents.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params }) => json(200, presentRefreshStatus(await refreshStatus(ctx, params.thread_uuid!))),
});
