import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Middleware } from 'openapi-fetch';
import { createGoalTrackingClient, type GoalTrackingClient } from '../../clients/typescript/src/index.ts';
import type { Api, Res } from './api.ts';

type Document = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>>;
  components: object;
};

const document = JSON.parse(readFileSync('docs/openapi.json', 'utf8')) as Document;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
// Response schemas refer to `#/components/...`: one schema resource holding the components resolves them.
const DOCUMENT_ID = 'https://goal-tracking.invalid/openapi.json';
ajv.addSchema({ $id: DOCUMENT_ID, components: document.components });
const validators = new Map<string, ValidateFunction | null>();

/** The documented JSON schema of an answer, compiled once; null when the document gives the status no JSON body. */
function validatorFor(path: string, method: string, status: number): ValidateFunction | null | undefined {
  const key = `${method} ${path} ${status}`;
  if (!validators.has(key)) {
    const responses = document.paths[path]?.[method]?.responses;
    if (!responses) return undefined;
    const response = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    if (!response) return undefined;
    const schema = response.content?.['application/json']?.schema;
    validators.set(
      key,
      schema ? ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOCUMENT_ID}#/components/`))) : null,
    );
  }
  return validators.get(key);
}

/**
 * Checks every answer against docs/openapi.json: a status the operation does not document, or a JSON body that
 * does not match the documented schema, fails the call. With the compile-time types of the generated client,
 * any drift between the document and the service breaks the suites that use it.
 */
export const matchesDocument: Middleware = {
  async onResponse({ request, response, schemaPath }) {
    const where = `${request.method} ${schemaPath} -> ${response.status}`;
    const validate = validatorFor(schemaPath, request.method.toLowerCase(), response.status);
    if (validate === undefined) throw new Error(`${where}: status not documented in docs/openapi.json`);
    if (validate === null || !response.headers.get('content-type')?.includes('application/json')) return undefined;
    const body = await response.clone().json();
    if (!validate(body))
      throw new Error(
        `${where}: answer does not match docs/openapi.json: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`,
      );
    return undefined;
  },
};

const clients = new WeakMap<Api, GoalTrackingClient>();

/** The typed client (clients/typescript) acting as the same caller as `api`, checking answers against the document. */
export function typed(api: Api): GoalTrackingClient {
  let client = clients.get(api);
  if (!client) {
    client = createGoalTrackingClient({ baseUrl: api.baseUrl, ...(api.token ? { token: api.token } : {}) });
    client.use(matchesDocument);
    clients.set(api, client);
  }
  return client;
}

/**
 * A typed call's outcome in the `Res` shape the suites assert on (`status`, `body`, `headers`). On an error
 * status `body` holds the error answer: check it with `expectError`.
 */
export async function answer<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Res<T>> {
  const { data, error, response } = await call;
  return { status: response.status, body: (data ?? error) as T, headers: response.headers };
}
