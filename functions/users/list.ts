import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listUsers } from '#shared/domain/users/list.ts';
import { userCollectionChecks } from '#shared/domain/users/service.ts';
import { presentUser } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  handle: async ({ ctx, query }) => {
    const result = await listUsers(ctx, query);
    return listResponse('user', result, result.records.map(presentUser), userCollectionChecks(ctx));
  },
});
