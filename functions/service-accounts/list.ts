import { apiHandler } from '#shared/http/api.ts';
import { listResponse } from '#shared/http/respond.ts';
import { listServiceAccounts } from '#shared/domain/service-accounts/list.ts';
import { serviceAccountCollectionChecks } from '#shared/domain/service-accounts/service.ts';
import { presentServiceAccount } from '#shared/presenters/service-accounts.ts';

export const handler = apiHandler({
  handle: async ({ ctx, query }) => {
    const result = await listServiceAccounts(ctx, query);
    return listResponse('service_account', result, result.records.map(presentServiceAccount), serviceAccountCollectionChecks(ctx));
  },
});
