import type { DomainCtx } from '#shared/domain/context.ts';
import { serviceAccountEntity, type ServiceAccountRecord } from '#shared/domain/service-accounts/entity.ts';
import { checkServiceAccountAdmin } from '#shared/domain/service-accounts/service.ts';
import { runList } from '#shared/list/engine.ts';
import { uuidAttr, type ListResource } from '#shared/list/resource.ts';

export const serviceAccountListResource: ListResource<ServiceAccountRecord> = {
  type: 'service_account',
  entity: serviceAccountEntity,
  lists: ['service_account'],
  attributes: {
    uuid: uuidAttr(),
    name: { type: 'string', get: (a) => a.name },
    status: { type: 'string', get: (a) => a.status },
    client_id: { type: 'string', get: (a) => a.client_id },
    scopes: { type: 'string', get: (a) => a.scopes },
    created_at: { type: 'timestamp', get: (a) => a.created_at },
    updated_at: { type: 'timestamp', get: (a) => a.updated_at },
  },
};

/** The tenant's service accounts (admin users), oldest first. */
export function listServiceAccounts(ctx: DomainCtx, pairs: Array<[string, string]>) {
  checkServiceAccountAdmin(ctx);
  return runList(serviceAccountListResource, { ctx, loader: ctx.loader, pairs });
}
