import type { Db } from '#shared/db/client.ts';

/**
 * What every request-scoped data access needs: the caller's tenant and a client confined to it. The store's
 * context, beside its client: the entity model (model.ts) the pure core declares its entities with knows neither.
 */
export interface DataCtx {
  tenantId: string;
  db: Db;
  /** Items the request read ahead (readEntitiesAhead, strongly consistent), by key; getEntity answers from it unless asked for a fresh read. */
  readAhead?: Map<string, Record<string, unknown> | null>;
}
