import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import {
  checkServiceAccountAdmin,
  createServiceAccount,
  serviceAccountAccessSource,
  serviceAccountChecks,
} from '#shared/domain/service-accounts/service.ts';
import { presentServiceAccountWithSecret } from '#shared/presenters/service-accounts.ts';

/** 201 with the account and, this once, its client_secret. */
export const handler = apiHandler({
  body: () => import('#shared/schemas/bodies/service-account-create.ts').then((m) => m.ServiceAccountCreateBody),
  sealReplays: true,
  handle: async ({ ctx, body }) => {
    const { record, secret } = await createServiceAccount(ctx, body);
    return recordResponse(
      201,
      'service_account',
      presentServiceAccountWithSecret(record, secret),
      serviceAccountChecks(ctx),
      serviceAccountAccessSource,
    );
  },
  authorizeReplay: ({ ctx }) => checkServiceAccountAdmin(ctx),
});
