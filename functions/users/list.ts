import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listUsers } from '#shared/domain/users/list.ts';
import { userCollectionChecks } from '#shared/domain/users/service.ts';
import { presentUser } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  // the list starts alongside the caller's read (page 1: two round trips)
  early: ({ data, loader, ctx, query }) => listUsers({ data, loader, ctx }, query),
  handle: async ({ ctx, early }) => {
    const result = await early;
    return listResponse('user', result, result.records.map(presentUser), userCollectionChecks(ctx));
  },
});
