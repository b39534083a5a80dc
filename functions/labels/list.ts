import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listLabels } from '#shared/domain/labels/list.ts';
import { labelCollectionChecks } from '#shared/domain/labels/service.ts';
import { presentLabel } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  handle: async ({ ctx, query }) => {
    const result = await listLabels(ctx, query);
    return listResponse('label', result, result.records.map(presentLabel), labelCollectionChecks(ctx));
  },
});
