import { request as httpRequest } from 'node:http';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { MAX_BODY_BYTES, MAX_HEADER_BYTES } from '#shared/http/transport.ts';
import { expectError, listAll, newTenant } from '../support/api.ts';

const labelCount = async (api: Parameters<typeof listAll>[0]) => (await listAll(api, '/rest/v2/labels')).length;

/** A raw HTTP request (fetch would refuse some of these headers itself). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: any; headers: Headers }> {
  const url = new URL(path, inject('apiUrl'));
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname: url.hostname, port: url.port, path: url.pathname, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: res.statusCode!,
          body: text ? JSON.parse(text) : undefined,
          headers: new Headers(Object.entries(res.headers).map(([k, v]) => [k, String(v)])),
        });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('HTTP transport (contract section 11)', () => {
  it('refuses a body that is not application/json with 415 unsupported_media_type, and writes nothing', async () => {
    const t = await newTenant();
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'text/csv']) {
      const e = expectError(
        await t.admin.request('POST', '/rest/v2/labels', { name: 'Plain' }, { 'content-type': type }),
        415,
        'unsupported_media_type',
      );
      expect(e.details[0]?.field).toBe('Content-Type');
    }
    // No content type at all with a body.
    expectError(
      await raw('POST', '/rest/v2/labels', { authorization: `Bearer ${t.admin.token}` }, '{"name":"None"}'),
      415,
      'unsupported_media_type',
    );
    expect(await labelCount(t.admin)).toBe(0);
    // JSON with parameters and +json types are JSON; a bodiless request needs no content type.
    expect(
      (await t.admin.request('POST', '/rest/v2/labels', { name: 'Charset' }, { 'content-type': 'application/json; charset=utf-8' })).status,
    ).toBe(201);
    expect(
      (await t.admin.request('POST', '/rest/v2/labels', { name: 'Merge' }, { 'content-type': 'application/merge-patch+json' })).status,
    ).toBe(201);
    expect((await raw('GET', '/rest/v2/labels', { authorization: `Bearer ${t.admin.token}` })).status).toBe(200);
  });

  it('keeps malformed JSON and prototype keys at 400, both in the error shape', async () => {
    const t = await newTenant();
    expectError(await t.admin.request('POST', '/rest/v2/labels', '{"name": '), 400, 'bad_request');
    const e = expectError(await t.admin.request('POST', '/rest/v2/labels', '{"name":"x","__proto__":{"admin":true}}'), 400, 'bad_request');
    expect(e.details[0]).toMatchObject({ field: '__proto__', code: 'prototype_key' });
    // at any depth, and constructor and prototype too (contract section 19: no body key reaches a prototype)
    const deep = expectError(
      await t.admin.request('POST', '/rest/v2/labels', '{"name":"x","a":{"constructor":{"prototype":{"admin":true}}}}'),
      400,
      'bad_request',
    );
    expect(deep.details.map((d) => d.field)).toEqual(['a.constructor', 'a.constructor.prototype']);
    expect(await labelCount(t.admin)).toBe(0);
  });

  it('refuses a body over 1 MB with 413 payload_too_large at the gateway; just under the limit reaches the service', async () => {
    const t = await newTenant();
    const over = JSON.stringify({ name: 'Big', color: 'x'.repeat(MAX_BODY_BYTES) });
    expectError(await t.admin.request('POST', '/rest/v2/labels', over), 413, 'payload_too_large');
    const under = JSON.stringify({ name: 'Big', color: 'x'.repeat(MAX_BODY_BYTES - 100) });
    const res = await t.admin.request('POST', '/rest/v2/labels', under);
    expect(res.status).toBeLessThan(500);
    expect(res.status).not.toBe(413);
    expect(await labelCount(t.admin)).toBe(res.status === 201 ? 1 : 0);
  });

  it('refuses headers over the limit with 431 headers_too_large: in the service above 8 KiB, at the local gateway above 16 KiB', async () => {
    const t = await newTenant();
    const service = await t.admin.request(
      'POST',
      '/rest/v2/labels',
      { name: 'Headers' },
      { 'x-padding': 'p'.repeat(MAX_HEADER_BYTES + 10) },
    );
    expectError(service, 431, 'headers_too_large');
    const gateway = await raw('GET', '/rest/v2/labels', { authorization: `Bearer ${t.admin.token}`, 'x-padding': 'p'.repeat(20_000) });
    expect(gateway.status).toBe(431);
    expect(gateway.body.error).toMatchObject({ status: 431, code: 'headers_too_large' });
    expect(await labelCount(t.admin)).toBe(0);
  });

  it('the function itself answers 413 and 431 in the error shape (as deployed, behind API Gateway)', async () => {
    const { handler } = await import('../../functions/labels/create.ts');
    const context = { awsRequestId: 'local-test', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
    const event = (headers: Record<string, string>, body: string) =>
      ({
        version: '2.0',
        routeKey: 'POST /rest/v2/labels',
        rawPath: '/rest/v2/labels',
        rawQueryString: '',
        headers,
        body,
        isBase64Encoded: false,
        requestContext: { requestId: 'req-1', http: { method: 'POST', path: '/rest/v2/labels' } },
      }) as never;
    const big = await handler(event({ 'content-type': 'application/json' }, 'x'.repeat(MAX_BODY_BYTES + 1)), context);
    expect(big.statusCode).toBe(413);
    expect(JSON.parse(big.body!).error).toMatchObject({ status: 413, code: 'payload_too_large', request_id: 'req-1' });
    const base64 = await handler(
      {
        ...(event({ 'content-type': 'application/json' }, Buffer.alloc(MAX_BODY_BYTES + 1).toString('base64')) as object),
        isBase64Encoded: true,
      } as never,
      context,
    );
    expect(base64.statusCode).toBe(413);
    const headers = await handler(event({ 'X-Padding': 'p'.repeat(MAX_HEADER_BYTES) }, ''), context);
    expect(headers.statusCode).toBe(431);
    expect(JSON.parse(headers.body!).error.code).toBe('headers_too_large');
  });

  it('dresses every API response with security headers, errors included', async () => {
    const t = await newTenant();
    for (const res of [await t.admin.get('/rest/v2/labels'), await t.admin.get('/rest/v2/labels/00000000-0000-4000-8000-000000000000')]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
    }
  });
});
