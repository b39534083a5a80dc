import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { config } from '#shared/config.ts';
import type { Db } from '#shared/db/client.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { tenantDb } from '#shared/db/tenant-scope.ts';
import { UnauthorizedError } from '#shared/errors.ts';
import type { ApiEvent, ApiInternal, ApiResult } from '#shared/http/middleware/internal.ts';
import { UUID_RE } from '#shared/ids.ts';
import { Loader } from '#shared/list/entity-cache.ts';

/** The token's tenant and user (401 unless both are uuids), and a data context confined to that tenant. */
async function tokenTenant(event: ApiEvent): Promise<{ data: DataCtx & { db: Db }; userId: string }> {
  const claims = event.requestContext?.authorizer?.jwt?.claims ?? {};
  const tenantId = claims[config.tenantClaim];
  const userId = claims[config.userClaim];
  // Only uuids: a claim is built into key prefixes and the tenant's LeadingKeys policy (`T#<tenant>#*`), where
  // `*` or `?` from an external issuer's token would widen the pattern to other tenants.
  if (typeof tenantId !== 'string' || typeof userId !== 'string' || !UUID_RE.test(tenantId) || !UUID_RE.test(userId))
    throw new UnauthorizedError('Token does not name a tenant and a user');
  const tenant = tenantId.toLowerCase();
  return { data: { tenantId: tenant, db: await tenantDb(tenant) }, userId: userId.toLowerCase() };
}

/** Puts the token's tenant (`data`, confined to it), user (`userId`) and the request's `loader` in request.internal; 401 for a token naming no uuids. */
export const tenantFromClaims = (): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> => ({
  name: 'tenantFromClaims',
  before: async (request) => {
    const { data, userId } = await tokenTenant(request.event);
    request.internal.data = data;
    request.internal.userId = userId;
    request.internal.loader = new Loader(data);
  },
});
