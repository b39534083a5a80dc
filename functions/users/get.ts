import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { getUser, userAccessSource, userChecks } from '#shared/domain/users/service.ts';
import { presentUser } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params }) => {
    const user = await getUser(ctx, params.id!);
    return recordResponse(200, 'user', presentUser(user), userChecks(ctx, user), userAccessSource(ctx));
  },
});
