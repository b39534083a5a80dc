import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import { serviceAccountAccessSource, serviceAccountChecks, updateServiceAccount } from '#shared/domain/service-accounts/service.ts';
import { presentServiceAccount } from '#shared/presenters/service-accounts.ts';

export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/service-account-update.ts').then((m) => m.ServiceAccountUpdateBody),
  handle: async ({ ctx, params, body }) =>
    recordResponse(
      200,
      'service_account',
      presentServiceAccount(await updateServiceAccount(ctx, params.id!, body)),
      serviceAccountChecks(ctx),
      serviceAccountAccessSource,
    ),
});
