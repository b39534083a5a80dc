import { tenantDb } from '#shared/db/tenant-scope.ts';
import { IMPORT_MAX_RECEIVES } from '#shared/domain/imports/entity.ts';
import { runImport } from '#shared/domain/imports/worker.ts';
import { logger } from '#shared/logger.ts';
import { batchHandler } from '#functions/workers/batch.ts';

// The row check (zod and the goal create body) is imported with the first message, not at cold start.
let rowParser: Promise<typeof import('#shared/schemas/import-row.ts').parseImportRow> | undefined;
const parseRowOnFirstUse = () => (rowParser ??= import('#shared/schemas/import-row.ts').then((m) => m.parseImportRow));

/** Consumer of the goal-imports queue: validates and creates one import (shared/domain/imports/worker.ts), with the tenant's confined client. */
export const handler = batchHandler({
  name: 'goal import',
  schema: () => import('#shared/schemas/messages/import.ts').then((m) => m.ImportMessageSchema),
  log: logger,
  process: async (msg, { receiveCount }) => {
    const data = { tenantId: msg.tenant_uuid, db: await tenantDb(msg.tenant_uuid) };
    const r = await runImport(data, msg.import_uuid, { log: logger, lastAttempt: receiveCount >= IMPORT_MAX_RECEIVES, parseRow: await parseRowOnFirstUse() });
    return { tenant_uuid: msg.tenant_uuid, import_uuid: msg.import_uuid, state: r.state, done: r.done, total: r.total };
  },
});
