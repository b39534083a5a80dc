import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { serviceAccountAccessSource, serviceAccountChecks, showServiceAccount } from '#shared/domain/service-accounts/service.ts';
import { presentServiceAccount } from '#shared/presenters/service-accounts.ts';

export const handler = apiHandler({
  handle: async ({ ctx, params }) =>
    recordResponse(
      200,
      'service_account',
      presentServiceAccount(await showServiceAccount(ctx, params.id!)),
      serviceAccountChecks(ctx),
      serviceAccountAccessSource,
    ),
});
