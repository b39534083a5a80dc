import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listSyncs } from '#shared/domain/integrations/data-sources.ts';
import { presentDataSourceSync } from '#shared/presenters/integrations.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params, query }) => {
    const result = await listSyncs(ctx, params.id!, query);
    return listResponse('data_source_sync', result, result.records.map(presentDataSourceSync), {});
  },
});
