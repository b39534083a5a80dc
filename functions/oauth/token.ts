import { configuredIssuer } from '#shared/auth/issuer.ts';
import { tenantDb } from '#shared/db/tenant-scope.ts';
import type { OAuthRefusal } from '#shared/domain/service-accounts/decide.ts';
import { parseClientId } from '#shared/domain/service-accounts/entity.ts';
import { grantClientCredentials } from '#shared/domain/service-accounts/service.ts';
import { json, rateLimiter, tokenHandler, type ApiEvent } from '#shared/http/api.ts';
import { credentialBudget } from '#shared/http/credential-budget.ts';
import { NO_STORE } from '#shared/http/oauth-answer.ts';
import { PROTOTYPE_NAMES } from '#shared/schemas/json-input.ts';

const issuer = configuredIssuer();

/** Access tokens of the client credentials grant live 15 minutes: a disabled account's stop at once anyway (the caller check). */
const SERVICE_TOKEN_TTL_SECONDS = 900;

/** A refusal in RFC 6749 section 5.2's shape; invalid_client is 401 with the Basic challenge (the client may authenticate that way). */
function refusal(r: OAuthRefusal, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { ...NO_STORE, ...extra };
  if (r.error === 'invalid_client') headers['www-authenticate'] = 'Basic realm="goal-tracking-api", charset="UTF-8"';
  return json(r.error === 'invalid_client' ? 401 : 400, { error: r.error, error_description: r.description }, headers);
}

const invalidRequest = (description: string) => refusal({ error: 'invalid_request', description });
const invalidClient = () => refusal({ error: 'invalid_client', description: 'Client authentication failed' });

/** The longest parameter name read: as SCIM's attribute names (contract 19); no parameter of the grant comes near it. */
const NAME_MAX = 200;

/**
 * The form's parameters, or a refusal: each parameter at most once (RFC 6749 section 3.2), no name over NAME_MAX
 * characters and none naming a prototype. RFC 6749 has a server ignore parameters it does not know; these are
 * refused instead, as every door of the service refuses them (docs/architecture.md, "Hostile input").
 */
function formOf(event: ApiEvent): Map<string, string> | string {
  const mediaType = event.headers?.['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/x-www-form-urlencoded') return 'The body must be application/x-www-form-urlencoded';
  const raw = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  const form = new Map<string, string>();
  for (const [k, v] of new URLSearchParams(raw)) {
    if (k.length > NAME_MAX) return `A parameter name may take at most ${NAME_MAX} characters`;
    if (PROTOTYPE_NAMES.has(k)) return `No parameter may be called ${k}`;
    if (form.has(k)) return `${k} is repeated`;
    form.set(k, v);
  }
  return form;
}

/** HTTP Basic client credentials (RFC 6749 section 2.3.1: each part form-encoded before base64), or undefined without the header. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | 'malformed' | undefined {
  if (!header) return undefined;
  const m = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  if (!m) return 'malformed';
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    const plus = (s: string) => decodeURIComponent(s.replaceAll('+', ' '));
    return { id: plus(decoded.slice(0, colon)), secret: plus(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
}

/**
 * POST /oauth/token: the OAuth 2.0 client credentials grant (RFC 6749 section 4.4) for service accounts. An
 * unknown client, a wrong secret and a disabled account get one answer (invalid_client), after the same scrypt
 * run. Nothing is charged to the tenant named before the secret is proved (contract section 19): a failure
 * spends the failed-credential budget of its client id and of the tenant named (shared/http/credential-budget.ts),
 * checked before the tenant's session and scrypt, so guessing is throttled (429 with Retry-After) while the
 * tenant's own callers are served as before; a proved client then draws on its tenant's budget as any caller.
 * The door `token` (shared/http/doors.ts): every answer in OAuth's dialect (shared/http/oauth-answer.ts): a refusal
 * of the chain (413, 431), the failed-credential budget's or the tenant's 429 (`rate_limited`, Retry-After) and a 500 too.
 */
export const handler = tokenHandler(async ({ event }) => {
  const form = formOf(event);
  if (typeof form === 'string') return invalidRequest(form);
  const grantType = form.get('grant_type');
  if (!grantType) return invalidRequest('grant_type is required');
  if (grantType !== 'client_credentials')
    return refusal({ error: 'unsupported_grant_type', description: 'Only the client_credentials grant is supported' });
  const basic = basicCredentials(event.headers?.authorization);
  if (basic === 'malformed') return invalidClient();
  const inBody = form.has('client_id') || form.has('client_secret');
  if (basic && inBody) return invalidRequest('Authenticate the client one way: HTTP Basic or the body, not both');
  const id = basic?.id ?? form.get('client_id');
  const secret = basic?.secret ?? form.get('client_secret');
  if (!id || !secret) return invalidClient();
  const client = parseClientId(id);
  if (!client) return invalidClient();
  const scope = form.get('scope');
  const named = { tenantId: client.tenantId, client: `sa_${client.accountUuid}` };
  credentialBudget.check(named);
  const data = { tenantId: client.tenantId, db: await tenantDb(client.tenantId) };
  const outcome = await grantClientCredentials(data, client.accountUuid, secret, scope);
  if ('error' in outcome && outcome.error === 'invalid_client') {
    await credentialBudget.failed(named);
    return refusal(outcome);
  }
  // the secret matched (an invalid_scope too): from here the request is the account's, charged to its tenant
  credentialBudget.proved(named);
  const limitHeaders = (await rateLimiter.take(client.tenantId, client.accountUuid)) ?? {};
  if ('error' in outcome) return refusal(outcome, limitHeaders);
  const granted = outcome.scopes.join(' ');
  const { token } = await (await issuer).sign({
    tenantId: client.tenantId,
    userId: outcome.account.uuid,
    ttlSeconds: SERVICE_TOKEN_TTL_SECONDS,
    scope: granted,
    clientId: outcome.account.client_id,
  });
  return json(
    200,
    { access_token: token, token_type: 'Bearer', expires_in: SERVICE_TOKEN_TTL_SECONDS, scope: granted },
    { ...NO_STORE, ...limitHeaders },
  );
});
