import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { updateUser, userAccessSource, userChecks } from '#shared/domain/users/service.ts';
import { presentUser } from '#shared/presenters/directory.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/user-update.ts').then((m) => m.UserUpdateBody),
  handle: async ({ ctx, params, body }) => {
    const user = await updateUser(ctx, params.id!, body.user);
    return recordResponse(200, 'user', presentUser(user), userChecks(ctx, user), userAccessSource(ctx));
  },
});
