import type { MiddlewareObj } from '@middy/core';
import { jsonContentTypePattern } from '@middy/util';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { readJsonBody } from '#shared/schemas/json-input.ts';
import { HeadersTooLargeError, PayloadTooLargeError, UnsupportedMediaTypeError } from '#shared/http/http-errors.ts';

/** Largest request body (decoded bytes): 1 MiB. API Gateway would pass up to 10 MB; the service refuses with 413 first. */
export const MAX_BODY_BYTES = 1024 * 1024;
/**
 * Largest request header section (names, values, cookies): 8 KiB. API Gateway's own limit is 10 KiB and the
 * local stack's HTTP server 16 KiB, so the service's 431 in the contract's shape answers first.
 */
export const MAX_HEADER_BYTES = 8 * 1024;
export const DEFAULT_ACCEPTS = ['application/json'] as const;

/** The request body as the transport read it: JSON parsed, another accepted type as text, or nothing. */
export type ReadBody = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'raw'; mediaType: string; text: string };

const bodies = new WeakMap<object, ReadBody>();

/** The body read by `transport()` for this event (none when the request had no body). */
export const readBodyOf = (event: object): ReadBody => bodies.get(event) ?? { kind: 'none' };

type Event = Pick<APIGatewayProxyEventV2, 'headers' | 'body' | 'isBase64Encoded' | 'cookies' | 'routeKey'>;

function headerBytes(event: Event): number {
  let n = 0;
  for (const [k, v] of Object.entries(event.headers ?? {})) n += Buffer.byteLength(k) + Buffer.byteLength(v ?? '') + 4;
  for (const c of event.cookies ?? []) n += Buffer.byteLength(c) + 2;
  return n;
}

/** 431 and 413, before anything else runs (public routes too). */
export function checkSizes(event: Event): void {
  if (headerBytes(event) > MAX_HEADER_BYTES) throw new HeadersTooLargeError(MAX_HEADER_BYTES);
  const body = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.byteLength(body, 'base64') : Buffer.byteLength(body, 'utf8');
  if (bytes > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
}

let acceptsByRoute: Promise<Map<string, readonly string[]>> | undefined;

/**
 * The media types the route row accepts (`accepts`, default JSON only). The route table is imported on the
 * first request that carries a body other than JSON, not at cold start: its import builds every schema of
 * the API, and most functions never need it.
 */
async function acceptsOf(routeKey: string | undefined): Promise<readonly string[]> {
  acceptsByRoute ??= import('#shared/routes/index.ts').then(({ routes }) => new Map(routes.map((r) => [`${r.method} ${r.path}`, r.accepts ?? DEFAULT_ACCEPTS])));
  return (routeKey && (await acceptsByRoute).get(routeKey)) || DEFAULT_ACCEPTS;
}

/**
 * Reads the body of an authenticated route: none (absent or blank), JSON, or another media type the route
 * row accepts as text; anything else is 415 (contract section 11). JSON goes through `readJsonBody`
 * (shared/schemas/json-input.ts), not middy's JSON body parser: the exact-number rule needs each number's
 * source text, which JSON.parse hands a reviver and middy's wrapper drops; `__proto__` stays an own key, so
 * the schema names it as an unknown field (400).
 */
export async function readBody(event: Event, routeAccepts?: readonly string[]): Promise<ReadBody> {
  const raw = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (raw.trim() === '') return { kind: 'none' };
  const contentType = event.headers?.['content-type'];
  const mediaType = contentType?.split(';')[0]!.trim().toLowerCase();
  const isJson = !!contentType && jsonContentTypePattern.test(contentType.trim());
  // Every row takes JSON (Route['accepts'] starts with it), so a JSON body needs no look-up in the table.
  if (isJson && !routeAccepts) return { kind: 'json', value: readJsonBody(raw) };
  const accepts = routeAccepts ?? (await acceptsOf(event.routeKey));
  if (accepts.includes('application/json') && isJson) return { kind: 'json', value: readJsonBody(raw) };
  if (mediaType && accepts.includes(mediaType) && mediaType !== 'application/json') return { kind: 'raw', mediaType, text: raw };
  throw new UnsupportedMediaTypeError(contentType, accepts);
}

/** The transport checks as a middy middleware: sizes (413/431) and, for `withBody`, the body read (415/400). */
export const transport = (opts: { withBody: boolean }): MiddlewareObj<Event> => ({
  name: 'transport',
  before: async (request) => {
    checkSizes(request.event);
    if (opts.withBody) bodies.set(request.event, await readBody(request.event));
  },
});
