import type * as z from 'zod';
import type { RequestCtx } from '#shared/http/api.ts';

/** The scopes of contract section 17 a tool needs; a call whose token lacks its tool's is refused 403 insufficient_scope (shared/mcp/server.ts). */
export const GOALS_READ = 'goals:read';
export const GOALS_WRITE = 'goals:write';
export const DIRECTORY_READ = 'directory:read';
export const EVENTS_READ = 'events:read';
export type McpScope = typeof GOALS_READ | typeof GOALS_WRITE | typeof DIRECTORY_READ | typeof EVENTS_READ;

/**
 * One MCP tool: its arguments and result as zod schemas (the REST bodies and records, never a second copy; JSON
 * Schema is made from them once per container), and `run`, which calls the domain exactly as the tool's REST
 * route does. `idempotent`: the REST route (a POST) whose Idempotency-Key records an `idempotency_key` shares, and
 * the permission check a replay passes first.
 */
export interface McpTool<A extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  scope: McpScope;
  readOnly: boolean;
  args: A;
  result: R;
  run: (ctx: RequestCtx, args: z.infer<A>) => Promise<z.infer<R>>;
  /** A short sentence about the result, for a model that reads text only. */
  summary: (result: z.infer<R>) => string;
  idempotent?: { route: (args: z.infer<A>) => string; authorizeReplay: (ctx: RequestCtx, args: z.infer<A>) => Promise<unknown> };
}

export const tool = <A extends z.ZodType, R extends z.ZodType>(t: McpTool<A, R>) => t as unknown as McpTool;

/** A REST answer's `data`, as the REST route would have sent it (the presenters build an HTTP answer). */
export const dataOf = (res: { body?: string }) => (JSON.parse(res.body!) as { data: unknown }).data as never;

export const listData = <T extends z.ZodType>(envelope: z.ZodObject<{ data: T }>) => envelope.shape.data;
