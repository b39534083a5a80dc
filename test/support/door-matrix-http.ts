import { configuredIssuer } from '#shared/auth/issuer.ts';
import { SCOPES } from '#shared/auth/scopes.ts';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import type { Json } from './door-matrix.ts';

/**
 * The door matrix's HTTP side: one raw request per call (no client-side checks: the answer is the finding), each
 * door's dialect as a check that returns what differs from the promise (undefined when it holds), and the tenants
 * the groups run in. Contract section 19 says what each door answers; where it is silent, each door's dialect as it
 * answers today (docs/openapi.json documents them): REST and push the contract's error shape, SCIM RFC 7644's error
 * (application/scim+json), MCP a refused tool result whose text is the REST error body (contract 15) and JSON-RPC
 * errors for malformed messages, the token endpoint RFC 6749's `{error, error_description}` for every refusal, the
 * service's own code as `error` where RFC 6749 has none (its 429 is `rate_limited`, so its 413 is `payload_too_large`).
 */

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
  ms: number;
}

export interface Call {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export async function send(base: string, c: Call): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${base}${c.path}`, { method: c.method, headers: c.headers ?? {}, body: c.body });
  const text = await res.text();
  const ms = performance.now() - started;
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json, ms };
}

/** Text for a report: runs of one character over 40 long shown as `n×60000`, at most `max` characters. */
export function short(text: string, max = 400): string {
  let out = '';
  for (let i = 0; i < text.length && out.length <= max; ) {
    let k = i + 1;
    while (k < text.length && text[k] === text[i]) k++;
    out += k - i > 40 ? `${text[i]}×${k - i}` : text.slice(i, k);
    i = k;
  }
  return out.length > max ? `${out.slice(0, max)}…` : out;
}

export const describeAnswer = (a: Answer) => `${a.status} ${short(a.text)}`;

/** What differs from a promise, or undefined: each dialect's check. */
export type Check = (a: Answer) => string | undefined;

const fail = (want: string, a: Answer, why?: string) => `expected ${want}; got ${describeAnswer(a)}${why ? ` (${why})` : ''}`;

interface ErrorExpect {
  /** A detail must name this field (with this detail code, when given). */
  field?: string;
  detailCode?: string;
  /** The WWW-Authenticate header, exactly. */
  challenge?: string;
  retryAfter?: boolean;
}

const detailsProblem = (details: unknown, o: ErrorExpect) => {
  if (!o.field) return undefined;
  const list = Array.isArray(details) ? (details as Array<{ field?: string; code?: string }>) : [];
  return list.some((d) => d.field === o.field && (!o.detailCode || d.code === o.detailCode))
    ? undefined
    : `no detail names ${short(o.field, 80)}${o.detailCode ? ` with code ${o.detailCode}` : ''}`;
};

const headerProblems = (a: Answer, o: ErrorExpect) => {
  if (o.challenge && a.headers.get('www-authenticate') !== o.challenge)
    return `WWW-Authenticate ${JSON.stringify(a.headers.get('www-authenticate'))}, not ${JSON.stringify(o.challenge)}`;
  if (o.retryAfter && !(Number(a.headers.get('retry-after')) >= 1)) return `Retry-After ${JSON.stringify(a.headers.get('retry-after'))}`;
  return undefined;
};

const restWant = (status: number, code: string, o: ErrorExpect) =>
  `${status} ${code}${o.field ? ` naming ${short(o.field, 80)}` : ''}${o.detailCode ? ` (${o.detailCode})` : ''}${o.retryAfter ? ' with Retry-After' : ''}${o.challenge ? ` and ${o.challenge}` : ''}`;

/** The contract's error shape (section 1): status, code, details, request_id. */
function restErrorProblem(status: number, code: string, body: any, o: ErrorExpect): string | undefined {
  const e = body?.error;
  if (e?.status !== status || e?.code !== code) return 'another error';
  if (typeof e.message !== 'string' || typeof e.request_id !== 'string' || !Array.isArray(e.details))
    return 'not the contract’s error shape';
  return detailsProblem(e.details, o);
}

export const rest =
  (status: number, code: string, o: ErrorExpect = {}): Check =>
  (a) => {
    const want = restWant(status, code, o);
    if (a.status !== status) return fail(want, a);
    const p = restErrorProblem(status, code, a.json, o) ?? headerProblems(a, o);
    return p && fail(want, a, p);
  };

const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** RFC 7644 section 3.12, as application/scim+json; `scimType` when the promise names one. */
export const scim =
  (status: number, scimType?: string, o: Omit<ErrorExpect, 'field' | 'detailCode'> = {}): Check =>
  (a) => {
    const want = `SCIM ${status}${scimType ? ` ${scimType}` : ''}${o.retryAfter ? ' with Retry-After' : ''}${o.challenge ? ` and ${o.challenge}` : ''}`;
    if (a.status !== status) return fail(want, a);
    const b = a.json;
    if (!Array.isArray(b?.schemas) || b.schemas.length !== 1 || b.schemas[0] !== SCIM_ERROR || b.status !== String(status))
      return fail(want, a, 'not SCIM’s error shape');
    if (typeof b.detail !== 'string') return fail(want, a, 'no detail');
    if (!a.headers.get('content-type')?.startsWith('application/scim+json'))
      return fail(want, a, `content-type ${a.headers.get('content-type')}`);
    if (scimType && b.scimType !== scimType) return fail(want, a, `scimType ${b.scimType}`);
    const p = headerProblems(a, o);
    return p && fail(want, a, p);
  };

/** RFC 6749 section 5.2. */
export const oauth =
  (status: number, error: string, o: Pick<ErrorExpect, 'retryAfter'> = {}): Check =>
  (a) => {
    const want = `OAuth ${status} ${error}${o.retryAfter ? ' with Retry-After' : ''}`;
    if (a.status !== status || a.json?.error !== error || typeof a.json?.error_description !== 'string') return fail(want, a);
    const p = headerProblems(a, o);
    return p && fail(want, a, p);
  };

/** The tool result of a refused MCP tool call: HTTP 200, `isError: true`, the REST error body as its text (contract 15). */
export const mcpRefused =
  (status: number, code: string, o: Pick<ErrorExpect, 'field' | 'detailCode'> = {}): Check =>
  (a) => {
    const want = `a refused tool result (isError) with the REST error ${restWant(status, code, o)}`;
    if (a.status !== 200 || a.json?.jsonrpc !== '2.0') return fail(want, a);
    const result = a.json.result;
    if (!result) return fail(want, a, 'no tool result');
    if (result.isError !== true) return fail(want, a, 'the tool ran: no isError');
    let body: unknown;
    try {
      body = JSON.parse(result.content?.[0]?.text ?? '');
    } catch {
      return fail(want, a, 'its text is not the REST error body');
    }
    const p = restErrorProblem(status, code, body, o);
    return p && fail(want, a, p);
  };

/** A JSON-RPC error answer: one object (never an array), `error.code` as given. */
export const jsonRpc =
  (httpStatus: number, code: number): Check =>
  (a) => {
    const want = `HTTP ${httpStatus} with one JSON-RPC error ${code}`;
    if (a.status !== httpStatus || Array.isArray(a.json) || a.json?.jsonrpc !== '2.0' || a.json?.error?.code !== code) return fail(want, a);
    return undefined;
  };

/** Whether an answer is the limiter's refusal in any dialect (HTTP 429, or a tool result carrying one). */
export function isRateLimited(a: Answer): boolean {
  if (a.status === 429) return true;
  const text = a.json?.result?.isError ? a.json.result.content?.[0]?.text : undefined;
  try {
    return typeof text === 'string' && JSON.parse(text)?.error?.status === 429;
  } catch {
    return false;
  }
}

/** Runs `tasks` with at most `n` at once. */
export async function pool<T>(n: number, tasks: ReadonlyArray<() => Promise<T>>): Promise<T[]> {
  const out = new Array<T>(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

// ----- tenants and tokens ----------------------------------------------------------------------------------------

export interface Tenant {
  tenantUuid: string;
  adminUuid: string;
  /** The admin's token (an admin's role scopes: every scope). */
  token: string;
}

/** A tenant made by the operator command, no HTTP request made for it yet (so the limiter has not read its limits). */
export async function bareTenant(): Promise<Tenant> {
  const tag = crypto.randomUUID().slice(0, 8);
  const out = (await runAdmin(['create-tenant', '--name', `Door matrix ${tag}`, '--admin-email', `dm-${tag}@example.test`])) as {
    tenant_uuid: string;
    user_uuid: string;
    token: string;
  };
  return { tenantUuid: out.tenant_uuid, adminUuid: out.user_uuid, token: out.token };
}

/**
 * A tenant whose limiter admits `burst` requests and then nothing for 100 s (rps 0.01), its users likewise: set
 * before its first request, so no container has cached its limits (cached 10 s).
 */
export async function limitedTenant(burst: number): Promise<Tenant> {
  const t = await bareTenant();
  const b = String(burst);
  await runAdmin(['set-limits', '--tenant', t.tenantUuid, '--rps', '0.01', '--burst', b, '--user-rps', '0.01', '--user-burst', b]);
  return t;
}

/** A token signed by the stack's issuer: for a made-up user of the tenant (the caller check refuses it) or with chosen scopes. */
export async function signedToken(tenantUuid: string, userUuid: string, scopes: readonly string[] = SCOPES): Promise<string> {
  const issuer = await configuredIssuer();
  return (await issuer.sign({ tenantId: tenantUuid, userId: userUuid, ttlSeconds: 3600, scope: scopes.join(' ') })).token;
}

// ----- the doors ---------------------------------------------------------------------------------------------------

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
export const JSON_TYPE = { 'content-type': 'application/json' };
export const SCIM_TYPE = { 'content-type': 'application/scim+json' };
export const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' };
export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};

/** One JSON-RPC tools/call message, its arguments given as JSON text. */
export const toolCall = (tool: string, args: Json, id = 1): Json =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${JSON.stringify(tool)},"arguments":${args}}}`;

/** A request to /mcp. */
export const mcpCall = (token: string, message: Json): Call => ({
  method: 'POST',
  path: '/mcp',
  headers: { ...bearer(token), ...MCP_HEADERS },
  body: message,
});

/** A request to the token endpoint with a form (text) and optional extra headers. */
export const tokenCall = (form: string, headers: Record<string, string> = FORM_TYPE): Call => ({
  method: 'POST',
  path: '/oauth/token',
  headers,
  body: form,
});

export const credentialsForm = (a: { client_id: string; client_secret: string }, extra = '') =>
  `grant_type=client_credentials&client_id=${encodeURIComponent(a.client_id)}&client_secret=${encodeURIComponent(a.client_secret)}${extra}`;
