import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { createUser, userAccessSource, userChecks } from '#shared/domain/users/service.ts';
import { presentUser } from '#shared/presenters/directory.ts';
import { userCreateRefusal } from '#shared/domain/users/decide.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/user-create.ts').then((m) => m.UserCreateBody),
  handle: async ({ ctx, body }) => {
    const user = await createUser(ctx, body.user);
    return recordResponse(201, 'user', presentUser(user), userChecks(ctx, user), userAccessSource(ctx));
  },
  authorizeReplay: ({ ctx }) => {
    const refusal = userCreateRefusal(ctx.caller);
    if (refusal) throw refusal;
  },
});
