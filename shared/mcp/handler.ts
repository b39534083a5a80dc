import type { Context } from 'aws-lambda';
import { scopesOfClaim } from '#shared/auth/scopes.ts';
import { RateLimitedError, UnauthorizedError } from '#shared/errors.ts';
import { rateLimiter, type ApiEvent, type ApiResult, type RequestCtx } from '#shared/http/api.ts';
import { caller } from '#shared/http/middleware/caller.ts';
import type { ApiInternal } from '#shared/http/middleware/internal.ts';
import { rateLimit } from '#shared/http/middleware/rate-limit.ts';
import { callerStages, doorPipeline, type Stage } from '#shared/http/pipeline.ts';
import { checkSizes } from '#shared/http/transport.ts';
import { resourceMetadataUrl } from '#shared/mcp/base-url.ts';
import type { ToolCallMessage } from '#shared/mcp/message.ts';
import { verifyBearer } from '#shared/mcp/token.ts';
import type { Log } from '#shared/logger.ts';

/** What a tool call runs with: the admitted caller, or the refusal (429) its tool result reports. */
export interface McpCall {
  ctx: RequestCtx | undefined;
  refusal: RateLimitedError | undefined;
  requestId: string;
  internal: ApiInternal;
  context: Context;
  /** The token's scopes (contract section 17): each tool call needs its tool's (McpTool.scope). */
  scopes: ReadonlySet<string>;
  /** The one JSON-RPC message of the POST, read by the REST body rules (shared/mcp/message.ts): the SDK parses no body. */
  message: unknown;
  /** The message as a tools/call: the tool's name, its arguments as read, the refusal of hostile ones. */
  toolCall: ToolCallMessage | undefined;
}

/**
 * What `read` found in a POST (shared/mcp/server.ts): an answer already (a JSON-RPC refusal, or the transport's
 * 406/415), which nothing else runs for, or one message and whether the limiter charges it (a tools/call that
 * will run its tool: known, in the token's scopes, with arguments that break no rule).
 */
export type McpRead =
  | { kind: 'answer'; result: ApiResult }
  | { kind: 'message'; body: unknown; toolCall: ToolCallMessage | undefined; charge: boolean };

/** The MCP server module, loaded on the first POST: the SDK, zod and the tool schemas stay out of the cold start. */
export interface McpServer {
  read: (event: ApiEvent, scopes: ReadonlySet<string>, requestId: string, log: Log) => Promise<McpRead>;
  serve: (event: ApiEvent, call: McpCall) => Promise<ApiResult>;
  toolScope: (name: string) => string | undefined;
}

type McpInternal = ApiInternal & { mcp: McpRead };
type Mw = Stage<ApiInternal>;

/** The token's check, as the gateway authorizer does it on other routes, but with the MCP 401 (shared/mcp/token.ts). */
const bearer = (): Mw => ({
  name: 'bearer',
  before: async (request) => {
    checkSizes(request.event);
    await verifyBearer(request.event, resourceMetadataUrl());
  },
});

const tokenScopes = (event: ApiEvent) => scopesOfClaim(event.requestContext?.authorizer?.jwt?.claims?.scope);

/**
 * The body, read as REST reads one, before the token's tenant, the caller and the limiter (as REST's transport
 * stage): a refusal is answered without reading the caller or asking the limiter.
 */
const message = (load: () => Promise<McpServer>): Mw => ({
  name: 'mcpMessage',
  before: async (request) => {
    const internal = request.internal as McpInternal;
    internal.mcp = await (await load()).read(request.event, tokenScopes(request.event), internal.requestId, internal.log);
  },
});

/** `mw`, but not for a POST already answered. */
const unlessAnswered = (mw: Mw): Mw => ({
  name: mw.name,
  before: (request) => ((request.internal as McpInternal).mcp.kind === 'answer' ? undefined : mw.before!(request)),
});

/** Admits without charging: the caller is read (401) and nothing is taken. */
const FREE = { take: async () => undefined };

/**
 * The limiter, charged once for a tools/call that will run its tool (`charge`) and for nothing else. A service
 * account's token is charged only when the account, as the caller's read found it, still holds the tool's scope
 * (else the call is refused 403 uncharged, as REST's caller stage refuses a route's scope before the limiter).
 */
const chargedPerToolCall = (load: () => Promise<McpServer>): Mw => {
  const free = rateLimit(FREE);
  return {
    name: 'rateLimit',
    before: async (request) => {
      const internal = request.internal as McpInternal;
      const read = internal.mcp;
      if (read.kind !== 'message' || !read.charge) return free.before!(request);
      const scope = (await load()).toolScope(read.toolCall!.name)!;
      const limiter = {
        take: async (tenantId: string, userId: string) => {
          const { caller } = await internal.caller;
          const held = caller.scopes;
          return held && !held.has(scope) ? undefined : rateLimiter.take(tenantId, userId);
        },
      };
      return rateLimit(limiter).before!(request);
    },
  };
};

/**
 * POST /mcp, the door `mcp` of the one chain (shared/http/pipeline.ts), its substitutions: in the transport stage
 * the bearer check (sizes 413/431, then 401 with `resource_metadata`), then the body read by the REST
 * rules into one JSON-RPC message (shared/mcp/message.ts: -32700, -32600 for an array or a hostile value outside
 * a tool call's arguments), then the same stages as every REST route for the token's tenant, the row's scope, the
 * caller (401 when unknown or inactive, not read for a POST already answered) and the rate limiter (charged per tool
 * call), then the MCP server. The limiter charges a tools/call that will run
 * its tool once, as its REST call, and nothing else. A limiter's 429 does not end the request: the tool call it
 * would run answers it as a refused tool result (contract section 15).
 */
export function mcpHandler(opts: {
  load: () => Promise<McpServer>;
  /** Replays of an `idempotency_key` pass the permission check of the tool's REST route (`McpTool.idempotent`). */
  authorizeReplay: 'each tool its own';
}) {
  return doorPipeline<ApiInternal>(
    'mcp',
    {
      ...callerStages<ApiInternal>('mcp'),
      // the function proves the token where the gateway's authorizer would, before the body is read; then the one message
      transport: [bearer(), message(opts.load)],
      pathAndQuery: null,
      caller: unlessAnswered(caller()),
      limiter: unlessAnswered(chargedPerToolCall(opts.load)),
    },
    async (event, context) => {
      const internal = context.internal as McpInternal;
      const read = internal.mcp;
      if (read.kind === 'answer') return read.result;
      let ctx: RequestCtx | undefined;
      let refusal: RateLimitedError | undefined;
      try {
        ctx = await internal.ctx;
      } catch (err) {
        // who is calling is the transport's concern: an HTTP 401 with the header, or the 403 of a service account
        // that no longer holds the row's scope (as a token without it gets from scopeCheck); a budget's refusal is
        // the tool call's, with the limiter's headers (RateLimit, RateLimit-Policy, Retry-After) on its answer
        if (err instanceof UnauthorizedError)
          Object.assign(err.headers, { 'WWW-Authenticate': `Bearer resource_metadata="${resourceMetadataUrl()}"` });
        if (!(err instanceof RateLimitedError)) throw err;
        refusal = err;
        internal.responseHeaders = { ...internal.responseHeaders, ...err.headers };
      }
      const server = await opts.load();
      const call: McpCall = {
        ctx,
        refusal,
        requestId: internal.requestId,
        internal,
        context,
        scopes: tokenScopes(event),
        message: read.body,
        toolCall: read.toolCall,
      };
      return server.serve(event, call);
    },
  );
}
