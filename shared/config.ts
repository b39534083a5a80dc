/**
 * Configuration from the environment, read when a value is first needed (not at module load, so scripts that
 * set the environment after importing still see it). A missing required variable throws at that point.
 */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

function optional(name: string, fallback: string): string {
  return process.env[name] || fallback;
}

export const config = {
  get tableName(): string {
    return required('TABLE_NAME');
  },
  /** Set only locally (DynamoDB Local); unset in AWS. */
  get dynamoEndpoint(): string | undefined {
    return process.env.DYNAMODB_ENDPOINT || undefined;
  },
  get region(): string {
    return optional('AWS_REGION', 'us-east-1');
  },
  /** JWT claim names that carry the tenant and the user (configurable so a Cognito pool can be the issuer). */
  get tenantClaim(): string {
    return optional('TENANT_CLAIM', 'tenant_uuid');
  },
  get userClaim(): string {
    return optional('USER_CLAIM', 'user_uuid');
  },
  /**
   * The API's public base URL, without a trailing slash: the name the service gives itself (the MCP resource and
   * its RFC 9728 document, SCIM's meta.location). Configuration, never the request's Host or x-forwarded-proto,
   * which a client chooses. Deployed, the stack passes the API endpoint (infra/stack.ts); locally the local stack
   * passes its own URL (scripts/lib/local-stack.ts). No fallback: unset, the request fails (500, logged) rather
   * than advertise an origin a client named.
   */
  get apiBaseUrl(): string {
    const url = new URL(required('API_BASE_URL')); // a malformed value throws here, not in a client
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('API_BASE_URL must be an http(s) URL');
    return url.href.endsWith('/') ? url.href.slice(0, -1) : url.href;
  },
  /** Role assumed with a per-tenant session policy (dynamodb:LeadingKeys); unset locally. */
  get tenantRoleArn(): string | undefined {
    return process.env.TENANT_ROLE_ARN || undefined;
  },
};
