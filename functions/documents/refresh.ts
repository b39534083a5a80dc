import { apiHandler, json } from '#shared/http/api.ts';
import { refreshableDocument, startRefresh } from '#shared/domain/documents/refresh.ts';
import { presentRefreshStart } from '#shared/presenters/documents.ts';

// No body schema: the row documents RefreshStartBody, an empty strict object, which is what apiHandler checks a body
// of a route without one against (NO_BODY), loaded only when a body arrives.
export const handler = apiHandler({
  handle: async ({ ctx, params }) => json(202, presentRefreshStart(await startRefresh(ctx, params.shareable_uuid!))),
  authorizeReplay: ({ ctx, params }) => refreshableDocument(ctx, params.shareable_uuid!),
});
