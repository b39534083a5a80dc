import { config } from '#shared/config.ts';

/** The public path of the RFC 9728 document that describes /mcp. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** Where that document is, as the 401's `WWW-Authenticate: Bearer resource_metadata=` names it. */
export const resourceMetadataUrl = (): string => `${config.apiBaseUrl}${PROTECTED_RESOURCE_PATH}`;

/** The MCP endpoint as a protected resource (RFC 9728 `resource`): the configured base, never the request's Host. */
export const mcpResourceUrl = (): string => `${config.apiBaseUrl}/mcp`;
