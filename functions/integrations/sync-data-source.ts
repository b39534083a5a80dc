import { apiHandler, json } from '#shared/http/api.ts';
import { editableDataSource, requestSync } from '#shared/domain/integrations/data-sources.ts';
import { queueSender } from '#shared/queue/queue.ts';

/** 202: a run is queued; its attempt appears in GET /data_sources/{id}/syncs. */
export const handler = apiHandler({
  handle: async ({ ctx, params }) => {
    const run = await requestSync(ctx, params.id!, queueSender());
    return json(202, { data: { type: 'data_source_sync_run', record: { ...run, state: 'queued' } } });
  },
  authorizeReplay: ({ ctx, params }) => editableDataSource(ctx, params.id!),
});
