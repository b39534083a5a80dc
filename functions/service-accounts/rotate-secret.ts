import { apiHandler } from '#shared/http/api.ts';
import { recordResponse } from '#shared/http/respond.ts';
import {
  checkServiceAccountAdmin,
  rotateSecret,
  serviceAccountAccessSource,
  serviceAccountChecks,
} from '#shared/domain/service-accounts/service.ts';
import { presentServiceAccountWithSecret } from '#shared/presenters/service-accounts.ts';

/** 200 with the account and its new client_secret, shown this once; the old secret gets no more tokens. */
export const handler = apiHandler({
  sealReplays: true,
  handle: async ({ ctx, params }) => {
    const { record, secret } = await rotateSecret(ctx, params.id!);
    return recordResponse(
      200,
      'service_account',
      presentServiceAccountWithSecret(record, secret),
      serviceAccountChecks(ctx),
      serviceAccountAccessSource,
    );
  },
  authorizeReplay: ({ ctx }) => checkServiceAccountAdmin(ctx),
});
