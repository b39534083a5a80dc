import { tenantDb } from '#shared/db/tenant-scope.ts';
import { REFRESH_MAX_RECEIVES } from '#shared/domain/documents/entity.ts';
import { documentRefreshHandler, storeRefreshPort } from '#shared/domain/documents/worker.ts';
import { writerFromEnv } from '#shared/domain/documents/writer.ts';
import { logger } from '#shared/logger.ts';

/**
 * Consumer of the document-refresh queue: the refresh agent. Runs the writer (Amazon Bedrock when
 * BEDROCK_MODEL_ID is set, the built-in writer otherwise; read per batch, not at cold start) and ends the
 * run with its outcome. Each tenant's data through its confined client.
 */
export const handler = documentRefreshHandler({
  store: async (tenantId) => storeRefreshPort({ tenantId, db: await tenantDb(tenantId) }),
  writer: () => writerFromEnv(),
  maxReceiveCount: REFRESH_MAX_RECEIVES,
  log: logger,
});
