import { config } from '#shared/config.ts';
import { tenantDb } from '#shared/db/tenant-scope.ts';
import { IMPORT_MAX_RECEIVES, IMPORT_WORKER_TIMEOUT_SECONDS } from '#shared/domain/imports/entity.ts';
import { runImport } from '#shared/domain/imports/worker.ts';
import { limitDefaultsFromEnv, RateLimiter } from '#shared/http/rate-limit.ts';
import { logger } from '#shared/logger.ts';
import { batchHandler } from '#functions/workers/batch.ts';

// The row check (zod and the goal create body) is imported with the first message, not at cold start.
let rowParser: Promise<typeof import('#shared/schemas/import-row.ts').parseImportRow> | undefined;
const parseRowOnFirstUse = () => (rowParser ??= import('#shared/schemas/import-row.ts').then((m) => m.parseImportRow));

/** The tenant's budget, as the API's limiter keeps it (same items, same defaults): rows are charged as the importing user's requests. */
const limiter = new RateLimiter({ db: tenantDb, tableName: () => config.tableName, defaults: limitDefaultsFromEnv });

/** Time a delivery keeps back from its Lambda timeout: a last batch, its progress write and the pause. */
const STOP_BEFORE_TIMEOUT_MS = 120_000;

/** Consumer of the goal-imports queue: validates and creates one import (shared/domain/imports/worker.ts), with the tenant's confined client. */
export const handler = batchHandler({
  name: 'goal import',
  schema: () => import('#shared/schemas/messages/import.ts').then((m) => m.ImportMessageSchema),
  log: logger,
  process: async (msg, { receiveCount }) => {
    const runUntil = Date.now() + IMPORT_WORKER_TIMEOUT_SECONDS * 1000 - STOP_BEFORE_TIMEOUT_MS;
    const data = { tenantId: msg.tenant_uuid, db: await tenantDb(msg.tenant_uuid) };
    const r = await runImport(data, msg.import_uuid, {
      log: logger,
      lastAttempt: receiveCount >= IMPORT_MAX_RECEIVES,
      parseRow: await parseRowOnFirstUse(),
      budget: (userId, want) => limiter.takeUpTo(msg.tenant_uuid, userId, want),
      runUntil,
    });
    return {
      tenant_uuid: msg.tenant_uuid,
      import_uuid: msg.import_uuid,
      state: r.state,
      done: r.done,
      total: r.total,
      resume_at: r.resume_at ?? null,
    };
  },
});
