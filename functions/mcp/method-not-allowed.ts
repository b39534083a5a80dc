import { json, publicHandler } from '#shared/http/api.ts';

/**
 * GET and DELETE on /mcp: the server is stateless, so it offers no server-to-client event stream (GET) and has no
 * session to end (DELETE); the Streamable HTTP transport then answers 405.
 */
export const handler = publicHandler(async () =>
  json(
    405,
    { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this stateless server takes POST only' }, id: null },
    { Allow: 'POST' },
  ),
);
