import type { Route } from '#shared/routes/types.ts';
import { JsonRpcErrorResponse } from '#shared/schemas/mcp.ts';

/**
 * The MCP server (contract section 15). POST /mcp has no gateway authorizer (`tokenCheck: 'function'`): API
 * Gateway's JWT authorizer answers its own 401 without the `WWW-Authenticate: Bearer resource_metadata=...` header
 * MCP clients discover the issuer by, so the function checks the same JWT itself (shared/mcp/token.ts) and then
 * runs the same tenant, caller and rate-limit chain as every REST route. It writes what the REST routes its tools
 * mirror write (goals, check-ins).
 */
export const mcpRoutes: Route[] = [
  {
    method: 'POST',
    path: '/mcp',
    handler: 'functions/mcp/mcp.ts',
    auth: 'jwt',
    tokenCheck: 'function',
    // the least a token needs to use the server at all; each tool call also needs its own tool's scope
    scope: 'goals:read',
    table: 'write',
    doc: {
      summary: 'Model Context Protocol (Streamable HTTP, stateless, JSON answers): tools for AI assistants over the same goals',
      tag: 'mcp',
      extension: true,
      success: { status: 200, description: 'A JSON-RPC answer (202 with no body for a notification)' },
      refusals: [
        { status: 400, description: 'The body is not a JSON-RPC message (parse error or invalid request)', schema: JsonRpcErrorResponse },
        { status: 406, description: 'Accept must list both application/json and text/event-stream', schema: JsonRpcErrorResponse },
        { status: 415, description: 'Content-Type must be application/json', schema: JsonRpcErrorResponse },
      ],
    },
  },
  {
    method: 'GET',
    path: '/mcp',
    handler: 'functions/mcp/method-not-allowed.ts',
    auth: 'public',
    table: 'none',
    doc: {
      summary: 'Not offered: a stateless MCP server opens no server-to-client stream (405)',
      tag: 'mcp',
      extension: true,
      success: { status: 405, description: 'Method not allowed (Allow: POST)', schema: JsonRpcErrorResponse },
    },
  },
  {
    method: 'DELETE',
    path: '/mcp',
    handler: 'functions/mcp/method-not-allowed.ts',
    auth: 'public',
    table: 'none',
    doc: {
      summary: 'Not offered: a stateless MCP server has no session to end (405)',
      tag: 'mcp',
      extension: true,
      success: { status: 405, description: 'Method not allowed (Allow: POST)', schema: JsonRpcErrorResponse },
    },
  },
  {
    method: 'GET',
    path: '/.well-known/oauth-protected-resource',
    handler: 'functions/mcp/protected-resource.ts',
    auth: 'public',
    table: 'none',
    doc: {
      summary: 'OAuth protected resource metadata of /mcp (RFC 9728): the token issuer as its authorization server',
      tag: 'mcp',
      extension: true,
      success: { status: 200 },
    },
  },
];
