import { apiHandler, json } from '#shared/http/api.ts';
import { startRefresh } from '#shared/domain/documents/refresh.ts';
import { presentRefreshStart } from '#shared/presenters/documents.ts';
import { RefreshStartBody } from '#shared/schemas/documents.ts';

export const handler = apiHandler({
  body: RefreshStartBody,
  handle: async ({ ctx, params }) => json(202, presentRefreshStart(await startRefresh(ctx, params.shareable_uuid!))),
});
