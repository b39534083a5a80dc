import type { ApiEvent } from '#shared/http/api.ts';

/** The public path of the RFC 9728 document that describes /mcp. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/**
 * The API's base URL as the client reached it: the host API Gateway (or the local stack) was called on, over the
 * protocol it forwards (`x-forwarded-proto`; none locally, where the stack speaks plain HTTP).
 */
export function baseUrlOf(event: ApiEvent): string {
  const headers = event.headers ?? {};
  const proto = headers['x-forwarded-proto'] ?? 'http';
  const host = headers.host ?? event.requestContext.domainName;
  return `${proto}://${host}`;
}
