import type { Route } from '#shared/routes/types.ts';
import { JsonRpcErrorResponse } from '#shared/schemas/mcp.ts';

/**
 * The MCP server (contract section 15). POST /mcp has no gateway authorizer (`door: 'mcp'`: the function checks the JWT): API
 * Gateway's JWT authorizer answers its own 401 without the `WWW-Authenticate: Bearer resource_metadata=...` header
 * MCP clients discover the issuer by, so the function checks the same JWT itself (shared/mcp/token.ts) and then
 * runs the same tenant, caller and rate-limit chain as every REST route (the body read first, by the REST body
 * rules, one JSON-RPC message a POST; the limiter charged once a tool call: shared/mcp/handler.ts). It writes what the
 * REST routes its tools mirror write (goals, check-ins).
 */
export const mcpRoutes: Route[] = [
  {
    method: 'POST',
    path: '/mcp',
    handler: 'functions/mcp/mcp.ts',
    auth: 'jwt',
    door: 'mcp',
    // the least a token needs to use the server at all; each tool call also needs its own tool's scope
    scope: 'goals:read',
    table: 'write',
    doc: {
      summary: 'Model Context Protocol (Streamable HTTP, stateless, JSON answers): tools for AI assistants over the same goals',
      tag: 'mcp',
      extension: true,
      success: {
        status: 200,
        description:
          "A JSON-RPC answer (202 with no body for a notification). A tools/call that runs its tool costs one unit of the rate limit, as its REST call; a refused call is a tool result with `isError` and the REST error body (a 429 with the limiter's RateLimit headers and Retry-After on this answer). Other messages cost nothing",
      },
      refusals: [
        {
          status: 400,
          description:
            "The body is not one JSON-RPC message: not JSON (-32700); a JSON array (-32600: one message a POST, MCP 2025-06-18 has no batches); a value outside a tool call's arguments that breaks the JSON body rules (-32600, `data` the REST error: 422 invalid_number or invalid_string, 400 bad_request for a prototype key); or not JSON-RPC (-32700). Arguments that break them are the tool call's refused result, as its REST call's 4xx",
          schema: JsonRpcErrorResponse,
        },
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
    door: 'public',
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
    door: 'public',
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
    door: 'public',
    table: 'none',
    doc: {
      summary: 'OAuth protected resource metadata of /mcp (RFC 9728): the token issuer as its authorization server',
      tag: 'mcp',
      extension: true,
      success: { status: 200 },
    },
  },
];
