import { mcpHandler } from '#shared/mcp/handler.ts';

/**
 * POST /mcp: the Model Context Protocol over Streamable HTTP (contract section 15). The SDK and the tools load on
 * the first request. Each tool sending `idempotency_key` runs through its REST route's Idempotency-Key record,
 * and a replay passes that route's permission check first (each tool's `idempotent.authorizeReplay`,
 * shared/mcp/tools.ts).
 */
export const handler = mcpHandler({
  load: () => import('#shared/mcp/server.ts'),
  authorizeReplay: 'each tool its own',
});
