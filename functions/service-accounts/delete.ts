import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { deleteServiceAccount, serviceAccountAccessSource, serviceAccountChecks } from '#shared/domain/service-accounts/service.ts';
import { presentServiceAccount } from '#shared/presenters/service-accounts.ts';

/** 200 with the deleted account; its tokens are refused from now on (the caller check reads the account). */
export const handler = apiHandler({
  handle: async ({ ctx, params }) =>
    recordResponse(
      200,
      'service_account',
      presentServiceAccount(await deleteServiceAccount(ctx, params.id!)),
      serviceAccountChecks(ctx),
      serviceAccountAccessSource,
    ),
});
