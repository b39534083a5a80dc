import { describe, expect, it } from 'vitest';
import { AppError } from '#shared/errors.ts';
import { readBody } from '#shared/http/transport.ts';
import { routes } from '#shared/routes/index.ts';

const event = (contentType: string | undefined, body: string | undefined, routeKey = 'POST /rest/v2/labels') => ({ routeKey, headers: contentType ? { 'content-type': contentType } : {}, body, isBase64Encoded: false });
const status = async (p: Promise<unknown>) => p.then(() => 'ok', (e) => (e instanceof AppError ? e.status : e));

describe('request body by the route row`s accepts', () => {
  it('reads JSON, no body, and refuses other media types for a JSON-only route (the default)', async () => {
    expect(await readBody(event('application/json', '{"a":1}'))).toEqual({ kind: 'json', value: { a: 1 } });
    expect(await readBody(event(undefined, undefined))).toEqual({ kind: 'none' });
    expect(await readBody(event('text/plain', '  '))).toEqual({ kind: 'none' });
    expect(await status(readBody(event('text/csv', 'a,b')))).toBe(415);
    expect(await status(readBody(event('application/json', '{')))).toBe(400);
  });

  it('honours accepts: another media type arrives as text, JSON only when listed', async () => {
    const csvAndJson = ['text/csv', 'application/json'];
    expect(await readBody(event('text/csv; charset=utf-8', 'a,b\n1,2'), csvAndJson)).toEqual({ kind: 'raw', mediaType: 'text/csv', text: 'a,b\n1,2' });
    expect(await readBody(event('application/json', '[1]'), csvAndJson)).toEqual({ kind: 'json', value: [1] });
    expect(await status(readBody(event('application/json', '[1]'), ['text/csv']))).toBe(415);
    expect(await status(readBody(event('text/plain', 'x'), csvAndJson))).toBe(415);
  });

  it('looks the route row up by route key', async () => {
    const route = routes.find((r) => r.method === 'POST')!;
    const accepts = route.accepts ?? ['application/json'];
    const other = accepts.includes('text/plain') ? 'image/png' : 'text/plain';
    expect(await status(readBody(event(other, 'x', `${route.method} ${route.path}`)))).toBe(415);
  });
});
