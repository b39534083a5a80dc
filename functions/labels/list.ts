import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listLabels } from '#shared/domain/labels/list.ts';
import { labelCollectionChecks } from '#shared/domain/labels/service.ts';
import { presentLabel } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  // the list starts alongside the caller's read (page 1: two round trips)
  early: ({ data, loader, ctx, query }) => listLabels({ data, loader, ctx }, query),
  handle: async ({ ctx, early }) => {
    const result = await early;
    return listResponse('label', result, result.records.map(presentLabel), labelCollectionChecks(ctx));
  },
});
