import { tenantDb } from '#shared/db/tenant-scope.ts';
import { runSync, type SyncDeps } from '#shared/domain/integrations/sync.ts';
import { sendEmail } from '#shared/email/mailer.ts';
import { logger } from '#shared/logger.ts';
import type { WorkerHandler } from '#shared/queue/queue.ts';
import { batchHandler } from '#functions/workers/batch.ts';

/** The worker over any fetch, DNS and mailer (fakes in tests); `handler` below is the deployed one. */
export const dataSourceSyncHandler = (deps: () => SyncDeps): WorkerHandler =>
  batchHandler({
    name: 'data source sync',
    schema: () => import('#shared/schemas/messages/data-source-sync.ts').then((m) => m.SyncMessageSchema),
    log: logger,
    concurrent: true, // each fetch may wait 10 s for its source; a batch must fit the function's timeout
    process: async (msg) => runSync({ tenantId: msg.tenant_uuid, db: await tenantDb(msg.tenant_uuid) }, msg, deps()),
  });

/** Consumer of the data-source-syncs queue: one run of one http_json source per message. */
export const handler = dataSourceSyncHandler(() => ({ sendEmail, log: logger }));
