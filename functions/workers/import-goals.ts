import { parseImportRow } from '#shared/schemas/imports.ts';
import { tenantDb } from '#shared/db/tenant-scope.ts';
import { IMPORT_MAX_RECEIVES } from '#shared/domain/imports/entity.ts';
import { runImport } from '#shared/domain/imports/worker.ts';
import { ImportMessageSchema } from '#shared/schemas/messages/import.ts';
import { logger } from '#shared/logger.ts';
import { batchHandler } from '#functions/workers/batch.ts';

/** Consumer of the goal-imports queue: validates and creates one import (shared/domain/imports/worker.ts), with the tenant's confined client. */
export const handler = batchHandler({
  name: 'goal import',
  schema: ImportMessageSchema,
  log: logger,
  process: async (msg, { receiveCount }) => {
    const data = { tenantId: msg.tenant_uuid, db: await tenantDb(msg.tenant_uuid) };
    const r = await runImport(data, msg.import_uuid, { log: logger, lastAttempt: receiveCount >= IMPORT_MAX_RECEIVES, parseRow: parseImportRow });
    return { tenant_uuid: msg.tenant_uuid, import_uuid: msg.import_uuid, state: r.state, done: r.done, total: r.total };
  },
});
