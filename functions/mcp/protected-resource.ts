import { json, publicHandler } from '#shared/http/api.ts';
import { mcpResourceUrl } from '#shared/mcp/base-url.ts';
import { DIRECTORY_READ, EVENTS_READ, GOALS_READ, GOALS_WRITE, type McpScope } from '#shared/mcp/tool.ts';

const issuer = process.env.ISSUER_URL;
if (!issuer) throw new Error('Missing required environment variable ISSUER_URL');

/**
 * Every scope a tool may need (McpScope: a record of them all, so a scope added there fails to compile here until
 * listed), so a client asks the issuer for each it will use (list_events: events:read).
 */
const TOOL_SCOPES = Object.keys({
  [GOALS_READ]: true,
  [GOALS_WRITE]: true,
  [DIRECTORY_READ]: true,
  [EVENTS_READ]: true,
} satisfies Record<McpScope, true>);

/** RFC 9728: the MCP endpoint as a protected resource, and the issuer of its bearer tokens as its authorization server. */
export const handler = publicHandler(async () =>
  json(
    200,
    {
      resource: mcpResourceUrl(),
      authorization_servers: [issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: TOOL_SCOPES,
      resource_name: 'Goal-tracking API (MCP)',
    },
    { 'cache-control': 'public, max-age=300' },
  ),
);
