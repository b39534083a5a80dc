import type { MiddlewareObj } from '@middy/core';
import { jsonContentTypePattern } from '@middy/util';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
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

type Event = Pick<APIGatewayProxyEventV2, 'headers' | 'body' | 'isBase64Encoded' | 'cookies'>;

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

/**
 * Reads the body of an authenticated route: none (absent or blank), JSON, or another media type the route
 * row accepts (`accepts`, handed to apiHandler by the route's handler: the route table is not loaded) as
 * text; anything else is 415 (contract section 11). JSON goes through `readJsonBody`
 * (shared/schemas/json-input.ts), not middy's JSON body parser: the exact-number rule needs each number's
 * source text, which JSON.parse hands a reviver and middy's wrapper drops; `__proto__` stays an own key, so
 * the schema names it as an unknown field (400).
 */
export async function readBody(event: Event, accepts: readonly string[] = DEFAULT_ACCEPTS): Promise<ReadBody> {
  const raw = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (raw.trim() === '') return { kind: 'none' };
  const contentType = event.headers?.['content-type'];
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  const isJson = !!contentType && jsonContentTypePattern.test(contentType.trim());
  if (accepts.includes('application/json') && isJson) return { kind: 'json', value: readJsonBody(raw) };
  if (mediaType && accepts.includes(mediaType) && mediaType !== 'application/json') return { kind: 'raw', mediaType, text: raw };
  throw new UnsupportedMediaTypeError(contentType, accepts);
}

/**
 * The transport checks as a middy middleware: sizes (413/431) and, for `withBody`, the body read (415/400)
 * into `request.internal.read` (absent: no body was read).
 */
export const transport = (opts: {
  withBody: boolean;
  accepts?: readonly string[];
}): MiddlewareObj<Event, unknown, Error, Context, { read?: ReadBody }> => ({
  name: 'transport',
  before: async (request) => {
    checkSizes(request.event);
    if (opts.withBody) request.internal.read = await readBody(request.event, opts.accepts);
  },
});
