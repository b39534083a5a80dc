import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { IMPORT_MEDIA_TYPES } from '#shared/domain/imports/entity.ts';
import { AppError } from '#shared/errors.ts';
import { readBody } from '#shared/http/transport.ts';
import { routes } from '#shared/routes/index.ts';

const event = (contentType: string | undefined, body: string | undefined, routeKey = 'POST /rest/v2/labels') => ({
  routeKey,
  headers: contentType ? { 'content-type': contentType } : {},
  body,
  isBase64Encoded: false,
});
const status = async (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e) => (e instanceof AppError ? e.status : e),
  );

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
    expect(await readBody(event('text/csv; charset=utf-8', 'a,b\n1,2'), csvAndJson)).toEqual({
      kind: 'raw',
      mediaType: 'text/csv',
      text: 'a,b\n1,2',
    });
    expect(await readBody(event('application/json', '[1]'), csvAndJson)).toEqual({ kind: 'json', value: [1] });
    expect(await status(readBody(event('application/json', '[1]'), ['text/csv']))).toBe(415);
    expect(await status(readBody(event('text/plain', 'x'), csvAndJson))).toBe(415);
  });

  // The transport no longer loads the route table: a row's media types reach it only through its handler.
  it('every row that accepts more than JSON has its handler hand apiHandler the same list', async () => {
    const rows = routes.filter((r) => r.accepts);
    expect(rows.map((r) => `${r.method} ${r.path}`)).toContain('POST /rest/v2/imports');
    for (const r of rows) expect(readFileSync(r.handler, 'utf8'), r.handler).toMatch(/\n {2}accepts: IMPORT_MEDIA_TYPES,\n/);
    expect(routes.find((r) => r.path === '/rest/v2/imports' && r.method === 'POST')!.accepts).toBe(IMPORT_MEDIA_TYPES);
    // a handler that passes `accepts` has a row saying so (the OpenAPI document and the local stack read the row)
    const passing = [...new Set(routes.map((r) => r.handler))].filter((h) => /\n {2}accepts: /.test(readFileSync(h, 'utf8')));
    expect(passing).toEqual(rows.map((r) => r.handler));
  });
});
