import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { routeName, routes, type Route } from '#shared/routes/index.ts';
import { EVENT_SCHEMAS } from '#shared/schemas/events.ts';

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
  const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ErrorBody } } });
  for (const r of routes) {
    const pathParams = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    registry.registerPath({
      method: r.method.toLowerCase() as 'get',
      path: r.path,
      operationId: operationId(r),
      summary: r.doc.summary,
      tags: [r.doc.tag],
      security: r.auth === 'jwt' ? [{ bearer: [] }] : [],
      ...(r.doc.extension ? { 'x-extension': true } : {}),
      request: {
        ...(pathParams.length ? { params: z.object(Object.fromEntries(pathParams.map((p) => [p, z.string()]))) } : {}),
        ...(r.doc.list ? { query: listQuery } : {}),
        ...(r.doc.body ? { body: { content: { 'application/json': { schema: r.doc.body } } } } : {}),
      },
      responses: {
        [r.doc.success.status]: {
          description: r.doc.success.description ?? 'Success',
          ...(r.doc.success.schema ? { content: { 'application/json': { schema: r.doc.success.schema } } } : {}),
        },
        ...(r.auth === 'jwt'
          ? {
              400: errorResponse('Malformed request: bad JSON, wrong types, unknown fields, unknown filters'),
              401: { description: 'Missing or invalid token ({"message":"Unauthorized"} from the authorizer), or unknown/inactive user (error shape)' },
              403: errorResponse('The caller may not do this'),
              404: errorResponse('No such resource in the caller tenant'),
              409: errorResponse('conflict: concurrent writes to the same record kept winning the optimistic-concurrency race after retries; retry the request'),
              422: errorResponse('A rule is broken (validation_failed, taken, has_dependents)'),
              429: errorResponse('Rate limited; see Retry-After'),
            }
          : { 429: { description: 'Throttled by API Gateway (its own body {"message":"Too Many Requests"})' } }),
        500: errorResponse('Internal error; request_id identifies the log line'),
      },
    });
  }
  // Outbound events (contract section 12): what the service POSTs to registered webhooks (docs/webhooks.md).
  const webhookHeaders = z.object({
    'webhook-id': z.string().meta({ description: 'The event id: the same on every retry; deduplicate on it' }),
    'webhook-timestamp': z.string().meta({ description: 'Unix seconds of this attempt' }),
    'webhook-signature': z.string().meta({ description: '`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded secret after `whsec_`' }),
  });
  for (const [type, { schema, summary }] of Object.entries(EVENT_SCHEMAS)) {
    registry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `event${type.split(/[._]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}`,
      summary,
      tags: ['webhooks'],
      // The receiver authenticates the sender by the webhook-signature header, not by a credential.
      security: [],
      request: { headers: webhookHeaders, body: { content: { 'application/json': { schema } } } },
      responses: {
        200: { description: 'Any 2xx within 10 s delivers the event' },
        400: { description: 'Any other answer (or none within 10 s) fails the attempt: retried with back-off for about a day, then the delivery is failed' },
      },
    });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
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
  });
}
