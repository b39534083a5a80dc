import { scopesOfClaim } from '#shared/auth/scopes.ts';
import { scopeCheck } from '#shared/http/middleware/scope-check.ts';
import middy, { type MiddlewareObj } from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { Context } from 'aws-lambda';
import { newDbMetrics, withDbMetrics } from '#shared/db/metrics.ts';
import { AppError, UnauthorizedError } from '#shared/errors.ts';
import { rateLimiter, type ApiEvent, type ApiResult, type RequestCtx } from '#shared/http/api.ts';
import { caller } from '#shared/http/middleware/caller.ts';
import { errorsAndLogging } from '#shared/http/middleware/errors-and-logging.ts';
import type { ApiInternal } from '#shared/http/middleware/internal.ts';
import { rateLimit } from '#shared/http/middleware/rate-limit.ts';
import { tenantFromClaims } from '#shared/http/middleware/tenant-from-claims.ts';
import { checkSizes } from '#shared/http/transport.ts';
import { resourceMetadataUrl } from '#shared/mcp/base-url.ts';
import { verifyBearer } from '#shared/mcp/token.ts';
import { captureLambdaHandler, tracer } from '#shared/tracer.ts';

/** What a tool call runs with: the admitted caller, or the refusal (429) its tool result reports. */
export interface McpCall {
  ctx: RequestCtx | undefined;
  refusal: AppError | undefined;
  requestId: string;
  internal: ApiInternal;
  context: Context;
  /** The token's scopes (contract section 17): each tool call needs its tool's (McpTool.scope). */
  scopes: ReadonlySet<string>;
}

/** The MCP server, loaded on the first POST: the SDK, zod and the tool schemas stay out of the cold start. */
export type McpServe = (event: ApiEvent, call: McpCall) => Promise<ApiResult>;

/** The token's check, as the gateway authorizer does it on other routes, but with the MCP 401 (shared/mcp/token.ts). */
const bearer = (): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> => ({
  name: 'bearer',
  before: async (request) => {
    checkSizes(request.event);
    await verifyBearer(request.event, resourceMetadataUrl());
  },
});

const MIDDY_CALL_OPTIONS = { signal: new AbortController().signal };

/**
 * POST /mcp: the bearer check (401 with `resource_metadata`), then the same chain as every REST route for the
 * token's tenant, the caller (401 when unknown or inactive) and the rate limiter, then the MCP server. A
 * limiter's 429 does not end the request: the tool call it would run answers it as a refused tool result
 * (contract section 15), while initialize or tools/list, which read nothing, still answer.
 */
export function mcpHandler(opts: {
  serve: () => Promise<McpServe>;
  /** Replays of an `idempotency_key` pass the permission check of the tool's REST route (`McpTool.idempotent`). */
  authorizeReplay: 'each tool its own';
}) {
  const handler = middy<ApiEvent, ApiResult, Error, Context, ApiInternal>()
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(errorsAndLogging<ApiInternal>())
    .use(httpHeaderNormalizer())
    .use(bearer())
    .use(scopeCheck()) // the row's scope (goals:read) to use the server at all; each tool call checks its own
    .use(tenantFromClaims())
    .use({ name: 'noReadAhead', before: (r) => void (r.internal.readAhead = { entities: [], teams: false }) })
    .use(caller())
    .use(rateLimit(rateLimiter))
    .use({ name: 'internalToContext', before: (r) => void ((r.context as Context & { internal?: ApiInternal }).internal = r.internal) })
    .handler(async (event, context) => {
      const internal = (context as Context & { internal?: ApiInternal }).internal!;
      let ctx: RequestCtx | undefined;
      let refusal: AppError | undefined;
      try {
        ctx = await internal.ctx;
      } catch (err) {
        // who is calling is the transport's concern (an HTTP 401 with the header); a budget's refusal is the tool's
        if (err instanceof UnauthorizedError) {
          Object.assign(err.headers, { 'WWW-Authenticate': `Bearer resource_metadata="${resourceMetadataUrl()}"` });
          throw err;
        }
        if (!(err instanceof AppError)) throw err;
        refusal = err;
      }
      const serve = await opts.serve();
      const scopes = scopesOfClaim(event.requestContext?.authorizer?.jwt?.claims?.scope);
      return serve(event, { ctx, refusal, requestId: internal.requestId, internal, context, scopes });
    });
  return (event: ApiEvent, context: Context): Promise<ApiResult> =>
    withDbMetrics(newDbMetrics(), async () => (await handler(event, context, MIDDY_CALL_OPTIONS)) as ApiResult);
}
