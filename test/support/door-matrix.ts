import * as z from 'zod';
import type { McpTool } from '#shared/mcp/tool.ts';
import { TOOLS } from '#shared/mcp/tools.ts';
import { routes, type Route } from '#shared/routes/index.ts';

/**
 * The door matrix's derivation (contract section 19, issue 32): which door each row of the route table is, and which
 * of the matrix's case kinds its operations get, from the row's own fields (door, auth, rateLimited,
 * doc.body, doc.list, doc.query, listEngine, scope) and, for `/mcp`, from the tool list. Nothing here names an
 * ordinary route: a new row gets its cases from its fields, and a row the derivation cannot place (a new kind of
 * door, a public route) fails the matrix's coverage test until it is placed or exempted here with a reason.
 */

export type Door = 'REST' | 'SCIM' | 'MCP' | 'push' | 'token';

export const rowKey = (r: Pick<Route, 'method' | 'path'>) => `${r.method} ${r.path}`;

/** Rows that are no door of contract 19: public, bodiless, no caller to budget and no scope to check. */
export const EXEMPT_ROWS: Record<string, string> = {
  'GET /openapi.json': 'public and bodiless: a static document, no caller, no budget, no scope',
  'GET /.well-known/jwks.json': 'public and bodiless: the issuer keys, no caller, no budget, no scope',
  'GET /.well-known/openid-configuration': 'public and bodiless: the issuer discovery document, no caller, no budget, no scope',
  'GET /docs': 'public and bodiless: the API reference page, no caller, no budget, no scope',
  'GET /docs/scalar.js': 'public and bodiless: the reference page script, no caller, no budget, no scope',
  'GET /mcp': 'public 405: a stateless MCP server opens no stream; the MCP door is POST /mcp',
  'DELETE /mcp': 'public 405: a stateless MCP server has no session; the MCP door is POST /mcp',
  'GET /.well-known/oauth-protected-resource': 'public and bodiless: the RFC 9728 document of /mcp, no caller, no budget, no scope',
};

/** The door a row is, from its fields; undefined for a row the matrix does not know how to call (fails coverage unless exempt). */
export function doorOf(r: Route): Door | undefined {
  if (r.door === 'scim' && r.auth === 'jwt' && r.path.startsWith('/scim/v2/')) return 'SCIM';
  if (r.door === 'mcp' && r.auth === 'jwt' && r.method === 'POST' && r.path === '/mcp') return 'MCP';
  if (r.door === 'push' && r.auth === 'public' && r.method === 'POST' && r.doc.body) return 'push';
  if (
    r.door === 'token' &&
    r.auth === 'public' &&
    r.rateLimited &&
    r.method === 'POST' &&
    r.doc.bodyMediaType === 'application/x-www-form-urlencoded'
  )
    return 'token';
  if (r.door === 'rest' && r.auth === 'jwt' && !r.doc.bodyMediaType) return 'REST';
  return undefined;
}

/** The kinds of case the matrix has; each row of a door gets each kind, or a stated reason why it has none. */
export const KINDS = [
  'limiter',
  'scope',
  'scope-narrowed',
  'long-name',
  'body-1MiB',
  'number',
  'query-long-name',
  'prototype',
  'query-prototype',
] as const;
export type Kind = (typeof KINDS)[number];

/** `true`: the row gets cases of that kind; a string: why it has none. */
export type Plan = Record<Kind, true | string>;

const jsonBody = (r: Route) => !!r.doc.body && !r.doc.bodyMediaType && (r.accepts ?? ['application/json']).includes('application/json');
const readsQuery = (r: Route) => r.method === 'GET' && !!(r.doc.list || r.doc.query || r.listEngine);

const NO_BODY = 'no JSON body schema: the row reads no body (a body sent is refused whole)';
const NO_QUERY = 'reads no query parameters';

/** What a row of each door gets (its operations': for `/mcp`, every tool's). */
export function planOf(r: Route): Plan | undefined {
  const door = doorOf(r);
  const bodyKinds = (yes: boolean, why = NO_BODY) => ({
    'long-name': yes || why,
    'body-1MiB': yes || why,
    number: yes || why,
    prototype: yes || why,
  });
  const queryKinds = (yes: boolean) => ({ 'query-long-name': yes || NO_QUERY, 'query-prototype': yes || NO_QUERY });
  const scoped = {
    scope: r.scope ? true : 'the row names no scope (test/unit/route-scopes.test.ts fails for it)',
    'scope-narrowed':
      r.scope === 'service_accounts' ? 'no service account may hold service_accounts: there is nothing to narrow' : !!r.scope || 'no scope',
  } as const;
  switch (door) {
    case 'REST':
    case 'SCIM':
      return { limiter: true, ...scoped, ...bodyKinds(jsonBody(r)), ...queryKinds(readsQuery(r)) };
    case 'MCP':
      // every tool is an operation of this row: each gets every body kind, its limiter charge and its scope
      return {
        limiter: true,
        scope: true,
        'scope-narrowed': true,
        ...bodyKinds(true),
        ...queryKinds(false),
        'query-long-name': 'no query string: a tool takes filters as arguments (search_goals: a long-name case of its filters)',
        'query-prototype': 'no query string: a tool takes filters as arguments (each tool: prototype cases of its arguments)',
      };
    case 'push':
      return {
        limiter: true,
        scope: 'the push secret is the credential of one source and this one operation: it carries no scopes',
        'scope-narrowed': 'the push secret carries no scopes',
        ...bodyKinds(true),
        ...queryKinds(false),
      };
    case 'token':
      return {
        limiter: true,
        scope: true, // the door's scope refusal: a scope the account does not hold is 400 invalid_scope
        'scope-narrowed': 'the token endpoint issues tokens: the narrowed-token cases are the other doors’',
        ...bodyKinds(true),
        ...queryKinds(false),
      };
    default:
      return undefined;
  }
}

/** The rows of the route table, each with its door and plan (undefined when the matrix does not place it). */
export const MATRIX_ROWS = routes.map((r) => ({ route: r, key: rowKey(r), door: doorOf(r), plan: planOf(r) }));
export const rowsOf = (door: Door) => MATRIX_ROWS.filter((m) => m.door === door).map((m) => m.route);
export const MCP_TOOLS: readonly McpTool[] = TOOLS;
export const mcpRow = () => rowsOf('MCP')[0]!;

// ----- hostile input ------------------------------------------------------------------------------------------

export const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype'] as const;
export type ProtoName = (typeof PROTOTYPE_NAMES)[number];

/**
 * What each prototype name carries: where a copy by assignment would take it, `role: "admin"` lands on
 * Object.prototype (issue 32, finding 1: every user created later without a role would read it). The pollution
 * check at the end of the file looks for exactly that.
 */
export const pollution = (p: ProtoName): unknown => (p === 'constructor' ? { prototype: { role: 'admin' } } : { role: 'admin' });
/** The same as a dotted key or path (scim-patch splits those itself). */
export const dotted = (p: ProtoName) => (p === 'constructor' ? 'constructor.prototype.role' : `${p}.role`);

/** A key, SCIM attribute name or filter name in a body: 60,000 characters (issue 32, finding 2: 2.8 s in scim-patch). */
export const LONG_NAME = 'n'.repeat(60_000);
/**
 * A filter or parameter name in a query string: 12,000 characters, the longest that passes the gateway's 16 KiB
 * request-line and header limit (a 60,000-character one is the gateway's 431 before any door runs).
 */
export const LONG_QUERY_NAME = 'n'.repeat(12_000);
/** Just over SCIM's attribute-name cap (contract 19: over 200 characters is 400). */
export const NAME_201 = 'n'.repeat(201);
/** A body over the 1 MiB transport limit (contract 11: 413). */
export const OVER_1MIB = 1024 * 1024 + 1024;

/** Number texts no door may take (contract 19, "the JSON number rules"; docs/architecture.md, "Hostile input"). */
export const LONG_NUMBERS: ReadonlyArray<[label: string, text: string]> = [
  ['1e400', '1e400'],
  ['9007199254740993', '9007199254740993'],
  ['200,000 digits', `0.${'1'.repeat(200_000)}`],
];

// ----- JSON text -----------------------------------------------------------------------------------------------

/** JSON text, built as text: a key `__proto__` stays a key (an object literal's `__proto__` would set a prototype). */
export type Json = string;
export const j = (v: unknown): Json => JSON.stringify(v);
export const jobj = (entries: ReadonlyArray<readonly [string, Json]>): Json => `{${entries.map(([k, v]) => `${j(k)}:${v}`).join(',')}}`;
export const entriesOf = (o: Record<string, unknown>): Array<[string, Json]> => Object.entries(o).map(([k, v]) => [k, j(v)]);

// ----- body and argument shapes, from the zod schemas of the rows and tools ------------------------------------

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  items?: JsonSchema;
  enum?: unknown[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
};

/** A schema's top-level properties in order, with the root's `$defs` to resolve references by. */
function shapeOf(schema: z.ZodType): { props: Array<[string, JsonSchema]>; required: Set<string>; defs: Record<string, JsonSchema> } {
  const root = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const defs = root.$defs ?? {};
  const obj = resolve(root, defs);
  return { props: Object.entries(obj.properties ?? {}), required: new Set(obj.required ?? []), defs };
}

function resolve(s: JsonSchema, defs: Record<string, JsonSchema>): JsonSchema {
  let out = s;
  for (let i = 0; out.$ref && i < 10; i++) out = defs[out.$ref.split('/').pop()!] ?? {};
  return out;
}

function alternatives(s: JsonSchema, defs: Record<string, JsonSchema>): JsonSchema[] {
  const r = resolve(s, defs);
  const alts = r.anyOf ?? r.oneOf;
  return alts ? alts.flatMap((a) => alternatives(a, defs)) : [r];
}
const hasType = (s: JsonSchema, t: string) => (Array.isArray(s.type) ? s.type.includes(t) : s.type === t);

/**
 * Where a nested prototype key goes in a body of `schema`: under its first object-valued field (`metric`, `config`,
 * `user`, `filters`), else in the first element of its first array-of-objects field (`parents.0`), else under its
 * first field, else under `n` (an empty body schema). The path names the key as a detail's `field` would.
 */
export function nestTarget(schema: z.ZodType | undefined): { field: string; inArray: boolean } {
  if (!schema) return { field: 'n', inArray: false };
  const { props, defs } = shapeOf(schema);
  const objectField = props.find(([, s]) => alternatives(s, defs).some((a) => hasType(a, 'object')));
  if (objectField) return { field: objectField[0], inArray: false };
  const arrayField = props.find(([, s]) =>
    alternatives(s, defs).some((a) => hasType(a, 'array') && a.items && alternatives(a.items, defs).some((i) => hasType(i, 'object'))),
  );
  if (arrayField) return { field: arrayField[0], inArray: true };
  return { field: props[0]?.[0] ?? 'n', inArray: false };
}

/** The first field of a body (where a long number goes), `n` for an empty body schema. */
export const firstField = (schema: z.ZodType | undefined) => (schema ? shapeOf(schema).props[0]?.[0] : undefined) ?? 'n';

/** A record-valued argument (search_goals' `filters`): its keys are filter names. */
export function recordFields(schema: z.ZodType): string[] {
  const { props, defs } = shapeOf(schema);
  return props
    .filter(([, s]) =>
      alternatives(s, defs).some(
        (a) => hasType(a, 'object') && !a.properties && (a as { additionalProperties?: unknown }).additionalProperties,
      ),
    )
    .map(([k]) => k);
}

/**
 * A tool's required arguments, filled so the call is well-formed: uuids from the fixture (`time_period_uuid` the
 * period's, any other the goal's), an enum's first value, a string, 1, false, []. A hostile case adds to these, so
 * what it adds is the only thing wrong with the call.
 */
export function baseArgs(tool: McpTool, ids: { goal: string; period: string }): Record<string, unknown> {
  const { props, required, defs } = shapeOf(tool.args);
  const out: Record<string, unknown> = {};
  for (const [name, s] of props) {
    if (!required.has(name)) continue;
    const alt = alternatives(s, defs)[0] ?? {};
    if (name.endsWith('uuid')) out[name] = name === 'time_period_uuid' ? ids.period : ids.goal;
    else if (alt.enum?.length) out[name] = alt.enum[0];
    else if (hasType(alt, 'string')) out[name] = 'door matrix';
    else if (hasType(alt, 'number') || hasType(alt, 'integer')) out[name] = 1;
    else if (hasType(alt, 'boolean')) out[name] = false;
    else if (hasType(alt, 'array')) out[name] = [];
    else out[name] = {};
  }
  return out;
}

/** Replace `{param}` segments with fresh uuids: the limiter and scope checks run before any record is looked up. */
export const concretePath = (path: string, ids: Record<string, string> = {}) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? crypto.randomUUID());
