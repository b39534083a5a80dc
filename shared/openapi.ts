import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import * as z from 'zod';
import { SCOPE_DESCRIPTIONS } from '#shared/auth/scopes.ts';
import { routeName, routes, type Route } from '#shared/routes/index.ts';
import { EVENT_SCHEMAS } from '#shared/schemas/events.ts';
import { ScimErrorSchema } from '#shared/schemas/scim.ts';

/** SCIM's rows (shared/routes/scim.ts) answer application/scim+json, their errors in SCIM's shape (RFC 7644 3.12). */
const SCIM_MEDIA_TYPE = 'application/scim+json';
const isScim = (path: string) => path.startsWith('/scim/');

const ErrorBody = z.object({
  error: z.object({
    status: z.number().int(),
    code: z.string(),
    message: z.string(),
    details: z.array(z.object({ field: z.string().optional(), code: z.string(), message: z.string() })),
    request_id: z.string(),
  }),
});

const listQuery = z.object({
  page: z.string().optional().meta({ description: 'Page number (default 1)' }),
  per_page: z.string().optional().meta({ description: 'Records per page (default 20, clamped to 100)' }),
  limit: z.string().optional().meta({ description: 'Alias for per_page' }),
  limit_max: z.string().optional().meta({ description: 'Maximum records per page' }),
  offset: z.string().optional().meta({ description: 'Records to skip before the page' }),
  count: z.string().optional().meta({ description: "'true' adds data.pagy.count" }),
  cursor: z.string().optional().meta({
    description:
      'data.pagy.next_cursor of the page before: the page starting right after its last record (not with page, offset or count); every record that lives from the first page to the last and keeps its sort value comes exactly once, whatever is created or deleted meanwhile',
  }),
});

/**
 * The operation's id: the route's function name (`GET /rest/v2/users/{id}` → `getRestV2UsersId`), so an
 * endpoint has one name in the document, the generated client, the CDK construct and the logs. Derived from
 * method and path, it stays stable while summaries and handlers change.
 */
export const operationId = (r: Pick<Route, 'method' | 'path'>) => {
  const name = routeName(r);
  return name[0]!.toLowerCase() + name.slice(1);
};

/**
 * The OpenAPI 3.1 document, generated from the route table and the same zod schemas that validate
 * requests. Served at GET /openapi.json and committed as docs/openapi.json (a test fails when stale).
 */
export function buildOpenApiDocument() {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  // Service accounts' tokens (contract section 17); a user's token carries the scopes of its role the same way.
  registry.registerComponent('securitySchemes', 'oauth2', {
    type: 'oauth2',
    description: "A service account's client credentials, exchanged at POST /oauth/token for a 900 s token carrying its scopes",
    flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: SCOPE_DESCRIPTIONS } },
  });
  for (const r of routes) {
    const scim = isScim(r.path);
    const media = scim ? SCIM_MEDIA_TYPE : 'application/json';
    const errorResponse = (description: string) => ({ description, content: { [media]: { schema: scim ? ScimErrorSchema : ErrorBody } } });
    const pathParams = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    registry.registerPath({
      method: r.method.toLowerCase() as 'get',
      path: r.path,
      operationId: operationId(r),
      summary: r.doc.summary,
      // the scope also in words, where a reader (the docs page, the typed client's comments) sees it without `security`
      ...(r.scope ? { description: `Needs the scope \`${r.scope}\` (a token without it: 403 insufficient_scope).` } : {}),
      tags: [r.doc.tag],
      // the scope the route needs, under either scheme (3.1 allows scopes on http schemes)
      security: r.auth === 'jwt' ? [{ bearer: r.scope ? [r.scope] : [] }, { oauth2: r.scope ? [r.scope] : [] }] : [],
      ...(r.doc.extension ? { 'x-extension': true } : {}),
      request: {
        ...(pathParams.length ? { params: z.object(Object.fromEntries(pathParams.map((p) => [p, z.string()]))) } : {}),
        ...(r.doc.query ? { query: r.doc.query } : r.doc.list ? { query: listQuery } : {}),
        ...(r.doc.body
          ? {
              body: {
                content: {
                  [r.doc.bodyMediaType ?? 'application/json']: { schema: r.doc.body },
                  ...(scim ? { [SCIM_MEDIA_TYPE]: { schema: r.doc.body } } : {}),
                  ...(r.accepts?.includes('text/csv')
                    ? { 'text/csv': { schema: z.string().meta({ description: 'CSV with a header row of the JSON row field names' }) } }
                    : {}),
                },
              },
            }
          : {}),
      },
      responses: {
        [r.doc.success.status]: {
          description: r.doc.success.description ?? 'Success',
          ...(r.doc.success.schema ? { content: { [media]: { schema: r.doc.success.schema } } } : {}),
          ...(r.doc.success.contentType ? { content: { [r.doc.success.contentType]: { schema: z.string() } } } : {}),
        },
        ...Object.fromEntries(
          (r.doc.alsoSuccess ?? []).map((other) => [
            other.status,
            {
              description: other.description,
              ...(r.doc.success.schema ? { content: { 'application/json': { schema: r.doc.success.schema } } } : {}),
            },
          ]),
        ),
        ...(r.auth === 'jwt'
          ? {
              400: errorResponse(
                scim
                  ? 'invalidSyntax: bad JSON, wrong types; invalidFilter: a filter this service does not answer; invalidValue: a broken rule (SCIM has no 422: RFC 7644 section 3.12), a bad startIndex or count; invalidPath, noTarget: a PATCH path'
                  : 'Malformed request: bad JSON, wrong types, unknown fields, unknown filters',
              ),
              401: {
                description:
                  'Missing or invalid token ({"message":"Unauthorized"} from the authorizer), or unknown/inactive user (error shape)',
              },
              403: errorResponse(
                `The caller may not do this (forbidden), or its token lacks the scope ${r.scope} (insufficient_scope, with WWW-Authenticate: Bearer error="insufficient_scope", scope="${r.scope}")`,
              ),
              404: errorResponse('No such resource in the caller tenant'),
              409: errorResponse(
                `${scim ? 'uniqueness: the userName (e-mail) is taken; a group still used by goals or active sub-teams; ' : ''}${r.method !== 'GET' && /\/(users|Users)(\/|$)/.test(r.path) ? 'last_admin: the change would leave the tenant without an active admin; ' : ''}conflict: concurrent writes to the same record kept winning the optimistic-concurrency race after retries; retry the request`,
              ),
              // SCIM answers a broken rule as 400 invalidValue (shared/scim/errors.ts): its rows document no 422
              ...(scim ? {} : { 422: errorResponse('A rule is broken (validation_failed, taken, has_dependents)') }),
              429: errorResponse('Rate limited; see Retry-After'),
            }
          : {
              429: r.rateLimited
                ? errorResponse('rate_limited: too many requests for this client; see Retry-After (or API Gateway throttling)')
                : { description: 'Throttled by API Gateway (its own body {"message":"Too Many Requests"})' },
            }),
        ...Object.fromEntries(
          (r.doc.refusals ?? []).map((x) => [
            x.status,
            { description: x.description, content: { 'application/json': { schema: x.schema } } },
          ]),
        ),
        500: errorResponse('Internal error; request_id identifies the log line'),
      },
    });
  }
  // Outbound events (contract section 12): what the service POSTs to registered webhooks (docs/webhooks.md).
  const webhookHeaders = z.object({
    'webhook-id': z.string().meta({ description: 'The event id: the same on every retry; deduplicate on it' }),
    'webhook-timestamp': z.string().meta({ description: 'Unix seconds of this attempt' }),
    'webhook-signature': z.string().meta({
      description:
        '`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded secret after `whsec_`',
    }),
  });
  for (const [type, { schema, summary }] of Object.entries(EVENT_SCHEMAS)) {
    registry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `event${type
        .split(/[._]/)
        .map((w) => w[0]!.toUpperCase() + w.slice(1))
        .join('')}`,
      summary,
      tags: ['webhooks'],
      // The receiver authenticates the sender by the webhook-signature header, not by a credential.
      security: [],
      request: { headers: webhookHeaders, body: { content: { 'application/json': { schema } } } },
      responses: {
        200: { description: 'Any 2xx within 10 s delivers the event' },
        400: {
          description:
            'Any other answer (or none within 10 s) fails the attempt: retried with back-off for about a day, then the delivery is failed',
        },
      },
    });
  }
  return withRetriesAndLimits(
    new OpenApiGeneratorV31(registry.definitions).generateDocument({
      openapi: '3.1.0',
      info: {
        title: 'Goal-tracking API',
        version: '2.0.0',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
        description:
          'OKR goal tracking: objectives, key results, initiatives, check-ins, users, teams, labels. Operations marked x-extension are additions of the contract to the specification. ' +
          'Errors are {"error":{status,code,message,details,request_id}}, except three answers API Gateway gives itself with its own body: a refused token (401 {"message":"Unauthorized"}), stage throttling (429 {"message":"Too Many Requests"}) and a method or path no route matches (404 {"message":"Not Found"}).',
      },
      servers: [{ url: '/' }],
    }),
  );
}

type OpenApiDoc = ReturnType<OpenApiGeneratorV31['generateDocument']>;
type Operation = {
  security?: unknown[];
  requestBody?: unknown;
  parameters?: unknown[];
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: unknown }>;
};

/**
 * Contract section 11 in the document: the Idempotency-Key header on every POST, the RateLimit-Policy and
 * RateLimit headers on every authenticated answer, Retry-After on 429, and the transport's 413/415/431.
 */
function withRetriesAndLimits(doc: OpenApiDoc): OpenApiDoc {
  const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
  const components = (doc.components ??= {}) as Record<string, Record<string, unknown>>;
  const contractError = { 'application/json': { schema: ref('schemas', 'Error') } };
  const scimErrorContent = { [SCIM_MEDIA_TYPE]: { schema: ref('schemas', 'ScimError') } };
  components.schemas = { ...components.schemas, Error: z.toJSONSchema(ErrorBody, { target: 'draft-2020-12' }) };
  components.headers = {
    ...components.headers,
    'RateLimit-Policy': {
      description:
        'IETF httpapi ratelimit-headers: the quotas that apply, `"user";q=<burst>;w=<seconds>, "tenant";q=<burst>;w=<seconds>` (absent when the tenant has no limit)',
      schema: { type: 'string' },
    },
    RateLimit: {
      description: 'IETF httpapi ratelimit-headers: what is left, `"user";r=<remaining>;t=<seconds until full>, "tenant";r=...;t=...`',
      schema: { type: 'string' },
    },
    'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } },
    'Idempotent-Replayed': {
      description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
      schema: { type: 'string', enum: ['true'] },
    },
  };
  components.parameters = {
    ...components.parameters,
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Makes the POST safe to retry for 24 hours: the same key, caller, route, path and body get the first answer again (status and body, with Idempotent-Replayed: true, once the caller is still allowed to make the request) and nothing new is written. Another path or body is 422 idempotency_key_reused; while the first is running, 409 idempotency_key_in_use; a first attempt that ended in 5xx or 429 does not keep its key.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
    },
  };
  const limitHeaders = { 'RateLimit-Policy': ref('headers', 'RateLimit-Policy'), RateLimit: ref('headers', 'RateLimit') };
  for (const [path, method, op] of Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>).map(([m, o]) => [path, m, o] as const),
  )) {
    if (!op.responses || !op.security?.length) continue; // public routes: no caller, no limits
    const error = isScim(path) ? scimErrorContent : contractError;
    for (const [status, res] of Object.entries(op.responses)) if (status !== '401') res.headers = { ...res.headers, ...limitHeaders };
    op.responses['429'] = {
      description: 'rate_limited: the tenant or the caller is over its limit',
      headers: { 'Retry-After': ref('headers', 'Retry-After'), ...limitHeaders },
      content: error,
    };
    op.responses['413'] = { description: 'payload_too_large: the body is over 1 MiB', content: error };
    op.responses['431'] = { description: 'headers_too_large: the request headers are over 8 KiB', content: error };
    if (op.requestBody)
      op.responses['415'] = { description: 'unsupported_media_type: the body is not in a media type the operation takes', content: error };
    if (method !== 'post') continue;
    op.parameters = [...(op.parameters ?? []), ref('parameters', 'IdempotencyKey')];
    for (const [status, res] of Object.entries(op.responses))
      if (status.startsWith('2')) res.headers = { ...res.headers, 'Idempotent-Replayed': ref('headers', 'Idempotent-Replayed') };
    const conflict = op.responses['409'];
    op.responses['409'] = {
      ...conflict,
      description: `${conflict ? `${conflict.description}; ` : ''}idempotency_key_in_use: a request with this Idempotency-Key is still running`,
      content: error,
    };
    if (isScim(path)) {
      const bad = op.responses['400'];
      op.responses['400'] = { ...bad, description: `${bad?.description}; invalidValue: this Idempotency-Key was used with another body` };
      continue;
    }
    const rule = op.responses['422'];
    op.responses['422'] = {
      ...rule,
      description: `${rule ? `${rule.description}; ` : ''}idempotency_key_reused: this Idempotency-Key was used with another body`,
      content: error,
    };
  }
  return doc;
}
