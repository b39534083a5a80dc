import { json, publicHandler } from '#shared/http/api.ts';
import { mcpResourceUrl } from '#shared/mcp/base-url.ts';

const issuer = process.env.ISSUER_URL;
if (!issuer) throw new Error('Missing required environment variable ISSUER_URL');

/** RFC 9728: the MCP endpoint as a protected resource, and the issuer of its bearer tokens as its authorization server. */
export const handler = publicHandler(async () =>
  json(
    200,
    {
      resource: mcpResourceUrl(),
      authorization_servers: [issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: ['goals:read', 'goals:write', 'directory:read'],
      resource_name: 'Goal-tracking API (MCP)',
    },
    { 'cache-control': 'public, max-age=300' },
  ),
);
