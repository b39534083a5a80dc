import { InsufficientScopeError } from '#shared/auth/scopes.ts';
import type { Context } from 'aws-lambda';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { AppError } from '#shared/errors.ts';
import type { ApiEvent, ApiResult, RequestCtx } from '#shared/http/api.ts';
import { idempotencyKeyOf, IDEMPOTENCY_KEY_HEADER, runIdempotent } from '#shared/http/idempotency.ts';
import { validateBody } from '#shared/http/middleware/body-validation.ts';
import { errorResponse } from '#shared/http/middleware/errors-and-logging.ts';
import { json } from '#shared/http/json.ts';
import { mcpResourceUrl } from '#shared/mcp/base-url.ts';
import type { McpCall } from '#shared/mcp/handler.ts';
import type { McpTool } from '#shared/mcp/tool.ts';
import { TOOLS, toolByName } from '#shared/mcp/tools.ts';
import { logger } from '#shared/logger.ts';

/**
 * The MCP server behind POST /mcp, loaded on the first request (shared/mcp/handler.ts): the SDK's web-standard
 * Streamable HTTP transport, stateless (no session; a fresh server and transport per request, as the SDK requires
 * for stateless use) with JSON answers, and the tools of contract section 15 (shared/mcp/tools.ts).
 */

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as Tool['inputSchema'];

/** Each tool's listing, its JSON Schemas made from its zod schemas once per container. */
const LISTING: Tool[] = TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: jsonSchema(t.args, 'input'),
  outputSchema: jsonSchema(t.result, 'output') as Tool['outputSchema'],
  annotations: { title: t.title, readOnlyHint: t.readOnly, destructiveHint: false, idempotentHint: t.readOnly, openWorldHint: false },
}));

/** A refused call as its REST answer: the error body as text, flagged as an error. */
const refused = (res: ApiResult): CallToolResult => ({ content: [{ type: 'text', text: res.body ?? '' }], isError: true });

async function runTool(tool: McpTool, args: unknown, ctx: RequestCtx, call: McpCall): Promise<ApiResult> {
  const toResponse = (err: unknown) => (err instanceof AppError ? errorResponse(err, call.requestId, ctx.log) : Promise.reject(err));
  const run = async () => json(200, await tool.run(ctx, validateBody(tool.args, args)));
  const key = (args as { idempotency_key?: unknown } | null)?.idempotency_key;
  if (!tool.idempotent || typeof key !== 'string') return run().catch(toResponse);
  // As the REST route's Idempotency-Key: the same record (tenant, user, route, key), the REST body's hash, the route's replay gate.
  const checked = validateBody(tool.args, args) as Record<string, unknown>;
  const { kind: _k, idempotency_key: _i, ...restBody } = checked;
  return runIdempotent(
    {
      db: call.internal.data.db,
      tenantId: ctx.caller.tenantId,
      userId: ctx.caller.userId,
      route: tool.idempotent.route(checked),
      params: {},
      key: idempotencyKeyOf({ [IDEMPOTENCY_KEY_HEADER]: key })!,
      body: { kind: 'json', value: restBody },
      context: call.context as Context,
      authorizeReplay: async () => void (await tool.idempotent!.authorizeReplay(ctx, checked)),
    },
    () => run().catch(toResponse),
  );
}

async function callTool(name: string, args: unknown, call: McpCall): Promise<CallToolResult> {
  const tool = toolByName.get(name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  const log = call.ctx?.log ?? logger;
  try {
    if (call.refusal) throw call.refusal;
    if (!call.scopes.has(tool.scope)) throw new InsufficientScopeError(tool.scope);
    const res = await runTool(tool, args ?? {}, call.ctx!, call);
    if ((res.statusCode ?? 200) >= 400) return refused(res);
    const structured = JSON.parse(res.body!) as Record<string, unknown>;
    return { content: [{ type: 'text', text: tool.summary(structured) }], structuredContent: structured };
  } catch (err) {
    // every refusal, and any failure, is the tool's result: the call gets the REST error body, never a 5xx
    return refused(errorResponse(err, call.requestId, log));
  }
}

function newServer(call: McpCall): Server {
  const server = new Server(
    { name: 'goal-tracking-api', version: '1.0.0' },
    {
      capabilities: { tools: { listChanged: false } },
      instructions:
        'Objectives, key results and initiatives (OKRs) of one organisation, as the signed-in user sees them. Search or list first to find uuids; goals_needing_attention answers "what is behind?"; create_checkin records progress.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: LISTING }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => callTool(req.params.name, req.params.arguments, call));
  return server;
}

/** The Lambda event as a web Request, the transport's Response as the Lambda answer. */
export async function serve(event: ApiEvent, call: McpCall): Promise<ApiResult> {
  const headers = new Headers();
  for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) headers.set(k, v);
  const body =
    event.body === undefined ? undefined : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  const request = new Request(mcpResourceUrl(), { method: event.requestContext.http.method, headers, body });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const server = newServer(call);
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    const out: Record<string, string> = {};
    response.headers.forEach((v, k) => void (out[k] = v));
    return { statusCode: response.status, headers: out, body: await response.text() };
  } finally {
    await server.close();
  }
}
