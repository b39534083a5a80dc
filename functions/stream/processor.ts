import { tenantDb } from '#shared/db/tenant-scope.ts';
import { logger } from '#shared/logger.ts';
import { streamProcessor } from '#shared/stream/processor.ts';
import { projections } from '#shared/stream/projections.ts';

/** The table's change stream → every projection (shared/stream/projections.ts), each tenant through its confined client. */
export const handler = streamProcessor({ projections, data: async (tenantId) => ({ tenantId, db: await tenantDb(tenantId) }), log: logger });
