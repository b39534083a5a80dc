import { z } from 'zod';

/**
 * A transport-level refusal of /mcp (a wrong Accept or Content-Type, a body that is not JSON-RPC, a method other
 * than POST): MCP clients read JSON-RPC errors there (the Streamable HTTP transport's own answers), not the
 * contract's error shape. A tool's own refusal is a JSON-RPC result carrying the contract's error body.
 */
export const JsonRpcErrorResponse = z
  .object({
    jsonrpc: z.literal('2.0'),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
    id: z.union([z.string(), z.number(), z.null()]),
  })
  .meta({ id: 'JsonRpcError' });
