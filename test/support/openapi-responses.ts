import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/**
 * Checks an answer of the service against docs/openapi.json, so the document cannot drift from what the
 * service answers: every request the end-to-end tests and the fuzz suite send goes through `responseProblem`
 * (test/support/api.ts). Objects are read strictly: a field the document does not name is drift too.
 *
 * - a documented status with a JSON schema: the body must match it (JSON Schema 2020-12, with formats);
 * - an undocumented 2xx: drift; an undocumented 4xx/5xx: must still be in the contract's error shape (on SCIM's paths:
 *   drift too, as they document every status they answer);
 * - 401 and paths no route matches: API Gateway's own `{"message": ...}` answers are allowed (contract 1).
 */

type Json = Record<string, unknown>;
const DOC_PATH = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  literalSegments: number;
  responses: Record<string, Json>;
}

let state:
  | {
      ajv: Ajv2020;
      operations: Operation[];
      errorShape: ValidateFunction;
      scimErrorShape: ValidateFunction;
      cache: Map<string, ValidateFunction>;
    }
  | undefined;

/** Objects with `properties` and no rule for others accept no others (`unevaluatedProperties` also sees allOf/anyOf branches). */
function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, strict(v)]));
  if (out.properties && typeof out.properties === 'object' && !('additionalProperties' in out) && !('unevaluatedProperties' in out))
    out.unevaluatedProperties = false;
  return out;
}

function load() {
  if (state) return state;
  const doc = JSON.parse(readFileSync(DOC_PATH, 'utf8')) as Json & {
    paths: Record<string, Record<string, Json>>;
    components: { schemas: Json };
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi', components: strict(doc.components) });
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    const segments = template.split('/');
    const pattern = new RegExp(
      `^${segments.map((s) => (/^\{\w+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/')}$`,
    );
    for (const [method, op] of Object.entries(item)) {
      operations.push({
        method: method.toUpperCase(),
        template,
        pattern,
        literalSegments: segments.filter((s) => !s.startsWith('{')).length,
        responses: (op.responses ?? {}) as Record<string, Json>,
      });
    }
  }
  // a literal segment beats a parameter (`/access_requests/mine` over a `{id}` in the same place)
  operations.sort((a, b) => b.literalSegments - a.literalSegments);
  const errorShape = ajv.compile({
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        additionalProperties: false,
        required: ['status', 'code', 'message', 'details', 'request_id'],
        properties: {
          status: { type: 'integer' },
          code: { type: 'string' },
          message: { type: 'string' },
          request_id: { type: 'string' },
          details: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['code', 'message'],
              properties: { field: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
            },
          },
        },
      },
    },
  });
  // SCIM's paths answer errors in SCIM's shape (RFC 7644 section 3.12), as the document's ScimError says
  const scimErrorShape = ajv.compile({ $ref: 'openapi#/components/schemas/ScimError' });
  state = { ajv, operations, errorShape, scimErrorShape, cache: new Map() };
  return state;
}

/** Refs in the document point at `#/components/...`; compiled schemas resolve them in the registered `openapi` schema. */
function rebase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebase);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `openapi${v}` : rebase(v)]),
  );
}

export function findOperation(method: string, path: string): Operation | undefined {
  const bare = path.split('?')[0]!;
  return load().operations.find((o) => o.method === method.toUpperCase() && o.pattern.test(bare));
}

const isApiGatewayMessage = (body: unknown) =>
  !!body && typeof body === 'object' && Object.keys(body).length === 1 && typeof (body as Json).message === 'string';

/** What is wrong with an answer by the document, or undefined when it matches. */
export function responseProblem(
  method: string,
  path: string,
  status: number,
  body: unknown,
  contentType: string | null,
): string | undefined {
  const op = findOperation(method, path);
  if (!op) return undefined; // no route: API Gateway's (and the local stack's) own 404/405
  const s = load();
  const where = `${method} ${op.template} -> ${status}`;
  if (status === 401 && isApiGatewayMessage(body)) return undefined;
  const documented = op.responses[String(status)];
  const scim = op.template.startsWith('/scim/');
  const media = scim ? 'application/scim+json' : 'application/json';
  const schema = (documented?.content as Json | undefined)?.[media] as Json | undefined;
  if (!documented) {
    // SCIM's rows list every status they answer (RFC 7644 3.12 has no 422: a broken rule is 400 invalidValue)
    if (status < 400 || scim) return `${where}: status not documented (documented: ${Object.keys(op.responses).join(', ')})`;
  }
  // a refusal documented with its own schema (the token endpoint's RFC 6749 OAuthError, contract section 17; /mcp's
  // JSON-RPC errors, section 15) is checked against that schema below, not the contract's shape
  const ref = (schema?.schema as Json | undefined)?.$ref;
  const ownShape = typeof ref === 'string' && ref !== '#/components/schemas/Error';
  if (status >= 400 && scim) {
    if (!s.scimErrorShape(body))
      return `${where}: error not in SCIM's shape: ${s.ajv.errorsText(s.scimErrorShape.errors)}; body ${JSON.stringify(body).slice(0, 500)}`;
    if ((body as { status: string }).status !== String(status)) return `${where}: SCIM error status differs from the HTTP status`;
    if (!contentType?.includes(media)) return `${where}: content-type ${contentType}, documented ${media}`;
  } else if (status >= 400 && !ownShape) {
    if (!s.errorShape(body))
      return `${where}: error not in the contract's shape: ${s.ajv.errorsText(s.errorShape.errors)}; body ${JSON.stringify(body).slice(0, 500)}`;
    if ((body as { error: { status: number } }).error.status !== status)
      return `${where}: error.status ${(body as { error: { status: number } }).error.status} differs from the HTTP status`;
  }
  if (!schema?.schema) return undefined;
  if (!contentType?.includes(media)) return `${where}: content-type ${contentType}, documented ${media}`;
  const key = `${op.method} ${op.template} ${status}`;
  let validate = s.cache.get(key);
  if (!validate) {
    validate = s.ajv.compile(rebase(strict(schema.schema)) as Json);
    s.cache.set(key, validate);
  }
  if (validate(body)) return undefined;
  const errors = (validate.errors ?? [])
    .slice(0, 5)
    .map(
      (e) =>
        `${e.instancePath || '/'} ${e.message}${e.params && 'unevaluatedProperty' in e.params ? ` (${String(e.params.unevaluatedProperty)})` : ''}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`,
    );
  return `${where}: body does not match docs/openapi.json: ${errors.join('; ')}; body ${JSON.stringify(body).slice(0, 800)}`;
}
