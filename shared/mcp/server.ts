import { InsufficientScopeError } from '#shared/auth/scopes.ts';
import type { Context } from 'aws-lambda';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  McpError,
  PingRequestSchema,
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
import type { McpCall, McpRead } from '#shared/mcp/handler.ts';
import { jsonRpcError, readMcpMessage } from '#shared/mcp/message.ts';
import type { McpTool } from '#shared/mcp/tool.ts';
import { TOOLS, toolByName } from '#shared/mcp/tools.ts';
import { logger, type Log } from '#shared/logger.ts';

/**
 * The MCP server behind POST /mcp, loaded on the first request (shared/mcp/handler.ts): the SDK's web-standard
 * Streamable HTTP transport, stateless (no session; a fresh server and transport per request, as the SDK requires
 * for stateless use) with JSON answers, and the tools of contract section 15 (shared/mcp/tools.ts). The SDK never
 * reads the body: `read` does, by the REST rules (shared/mcp/message.ts), and hands it the one message it found.
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

/**
 * The scopes a tool call is checked against: a service account's as the account is now (those of its token's it
 * still holds, read with the caller: contract section 19), else the token's claim.
 */
const scopesOf = (call: McpCall): ReadonlySet<string> => call.ctx?.caller.scopes ?? call.scopes;

/**
 * One tools/call: the refusals in the order a REST request meets them (its arguments' hostile values, as the
 * transport's body read; the tool's scope; the limiter's 429), then the tool. The arguments are the message's
 * as `read` parsed them (call.toolCall), not the SDK's copy: zod copies a record by assignment, so an own
 * `__proto__` key would become the copy's prototype.
 */
async function callTool(name: string, call: McpCall): Promise<CallToolResult> {
  const tool = toolByName.get(name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  const message = call.toolCall;
  if (message?.name !== name) throw new McpError(ErrorCode.InvalidRequest, 'Invalid Request: one message a POST'); // a POST is one message: cannot happen
  const log = call.ctx?.log ?? logger;
  try {
    if (message.argumentsRefusal) throw message.argumentsRefusal;
    if (!call.scopes.has(tool.scope)) throw new InsufficientScopeError(tool.scope);
    if (call.refusal) throw call.refusal;
    if (!scopesOf(call).has(tool.scope)) throw new InsufficientScopeError(tool.scope);
    const res = await runTool(tool, message.arguments ?? {}, call.ctx!, call);
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
  server.setRequestHandler(CallToolRequestSchema, async (req) => callTool(req.params.name, call));
  return server;
}

/** The scope a tool call needs, undefined for an unknown tool (shared/mcp/tools.ts). */
export const toolScope = (name: string): string | undefined => toolByName.get(name)?.scope;

const bodyText = (event: ApiEvent) =>
  event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;

/**
 * What the POST is, before the caller is read or the limiter asked: a JSON-RPC refusal already (`answer`: a body
 * that is not JSON, an array, a hostile value outside a tool call's arguments; or the transport's own 406/415 for
 * an Accept or Content-Type it refuses, checked first as the SDK does), or one message, `charge`d when it is a
 * tools/call of a known tool, in the token's scopes, with arguments that break no rule: what its REST call would
 * be charged for. Every other message (initialize, ping, tools/list, notifications, an unknown tool, a refused
 * call) costs nothing (docs/architecture.md, "MCP").
 */
export async function read(event: ApiEvent, scopes: ReadonlySet<string>, requestId: string, log: Log): Promise<McpRead> {
  const accept = event.headers?.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream') || !isJsonContentType(event.headers?.['content-type']))
    return { kind: 'answer', result: await transportAnswer(event) };
  const message = readMcpMessage(bodyText(event));
  if (message.kind === 'refused') {
    const data = message.error ? (JSON.parse(errorResponse(message.error, requestId, log).body!) as { error: unknown }).error : undefined;
    return { kind: 'answer', result: jsonRpcError(message.code, message.message, data) };
  }
  const invalid = invalidParams(message.body);
  if (invalid) return { kind: 'answer', result: invalid };
  const call = message.toolCall;
  const scope = call && !call.argumentsRefusal ? toolScope(call.name) : undefined;
  return { kind: 'message', body: message.body, toolCall: call, charge: scope !== undefined && scopes.has(scope) };
}

/** The requests this server answers, by method, with the SDK's schema of each. */
const REQUEST_SCHEMAS = new Map<
  string,
  { safeParse: (v: unknown) => { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } } }
>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
]);

/**
 * JSON-RPC -32602 (Invalid params) for a request this server answers whose params its schema refuses (a tools/call
 * whose `arguments` is not an object, an initialize without `clientInfo`): the SDK checks a request against its
 * method's schema outside its own error mapping and would answer -32603 (Internal error). An answer to the
 * request, so with its id and HTTP 200, as the SDK sends its own -32602.
 */
function invalidParams(body: unknown): ApiResult | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { jsonrpc, id, method } = body as Record<string, unknown>;
  if (jsonrpc !== '2.0' || (typeof id !== 'string' && typeof id !== 'number') || typeof method !== 'string') return undefined; // not a request: the SDK's to answer
  const parsed = REQUEST_SCHEMAS.get(method)?.safeParse(body);
  if (!parsed || parsed.success) return undefined;
  const problems = (parsed.error?.issues ?? []).map((i) => `${i.path.map(String).join('.') || 'params'}: ${i.message}`).join('; ');
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${problems}` } }),
  };
}

/** The web Request of the Lambda event, without its body: the transport is handed the message `read` found. */
function requestOf(event: ApiEvent): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(event.headers ?? {})) if (v !== undefined) headers.set(k, v);
  return new Request(mcpResourceUrl(), { method: event.requestContext.http.method, headers });
}

async function toResult(response: Response): Promise<ApiResult> {
  const out: Record<string, string> = {};
  response.headers.forEach((v, k) => void (out[k] = v));
  return { statusCode: response.status, headers: out, body: await response.text() };
}

/**
 * The transport's answer to a POST whose Accept or Content-Type it refuses (406, 415): no server is connected and
 * no body given, so nothing could run even if it did not refuse (an empty body is its -32700).
 */
async function transportAnswer(event: ApiEvent): Promise<ApiResult> {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  return toResult(await transport.handleRequest(requestOf(event)));
}

/** The message `read` found, through the SDK's transport and a fresh server, as the Lambda answer. */
export async function serve(event: ApiEvent, call: McpCall): Promise<ApiResult> {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const server = newServer(call);
  try {
    await server.connect(transport);
    return await toResult(await transport.handleRequest(requestOf(event), { parsedBody: call.message }));
  } finally {
    await server.close();
  }
}
