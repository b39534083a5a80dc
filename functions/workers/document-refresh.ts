import { tenantDb } from '#shared/db/tenant-scope.ts';
import { REFRESH_MAX_RECEIVES } from '#shared/domain/documents/entity.ts';
import { runRefresh, storeRefreshPort, type RefreshWorkerDeps } from '#shared/domain/documents/worker.ts';
import { writerFromEnv } from '#shared/domain/documents/writer.ts';
import { logger } from '#shared/logger.ts';
import type { WorkerHandler } from '#shared/queue/queue.ts';
import { batchHandler } from '#functions/workers/batch.ts';

/** The worker over any store and writer (fakes in tests); `handler` below is the deployed one. */
export const documentRefreshHandler = (deps: RefreshWorkerDeps): WorkerHandler =>
  batchHandler({
    name: 'document refresh',
    schema: () => import('#shared/schemas/messages/document-refresh.ts').then((m) => m.DocumentRefreshMessageSchema),
    log: deps.log,
    process: async (msg, { receiveCount }) => ({
      tenant_uuid: msg.tenant_uuid,
      thread_uuid: msg.thread_uuid,
      ...(await runRefresh(msg, receiveCount, deps)),
    }),
  });

/**
 * Consumer of the document-refresh queue: the refresh agent. Runs the writer (Amazon Bedrock when
 * BEDROCK_MODEL_ID is set, the built-in writer otherwise; read per run, not at cold start) and ends the
 * run with its outcome. Each tenant's data through its confined client.
 */
export const handler = documentRefreshHandler({
  store: async (tenantId) => storeRefreshPort({ tenantId, db: await tenantDb(tenantId) }),
  writer: () => writerFromEnv(),
  maxReceiveCount: REFRESH_MAX_RECEIVES,
  log: logger,
});
