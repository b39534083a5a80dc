import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchJson } from '#shared/domain/integrations/fetch-json.ts';
import { postWebhook } from '#shared/domain/webhooks/post.ts';
import type { SafeTarget } from '#shared/outbound/url-safety.ts';

/*
 * The one outbound request (shared/outbound/pinned-request.ts) as its two callers use it: a data source's fetch
 * (the whole body, or a failure) and a webhook delivery (the status, the first bytes of the answer to explain a
 * failure). A loopback receiver answers by path; the URL names a host that resolves nowhere, so every answer
 * proves the connection went to the pinned address.
 */

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const routes = new Map<string, Handler>();
const seen: Array<{ method: string; host: string; headers: IncomingMessage['headers']; body: string }> = [];
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method!, host: req.headers.host!, headers: req.headers, body });
      routes.get(req.url!)!(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const target = (path: string): SafeTarget => ({ url: new URL(`http://receiver.invalid:${port}${path}`), address: '127.0.0.1' });
const on = (path: string, handler: Handler) => (routes.set(path, handler), target(path));
const opts = { timeoutMs: 1000, bodyCap: 16 };

describe('fetchJson: the whole body or a failure', () => {
  it('GETs the pinned address with the URL host as Host, the given headers beside its own, and answers the body', async () => {
    const t = on('/ok', (_q, res) => res.end('{"v":12}'));
    await expect(fetchJson(t, { authorization: 'Bearer s' }, opts)).resolves.toEqual({ ok: true, body: '{"v":12}' });
    expect(seen.at(-1)).toMatchObject({
      method: 'GET',
      host: `receiver.invalid:${port}`,
      headers: { accept: 'application/json', 'user-agent': 'goal-tracking-data-sources/1', authorization: 'Bearer s' },
    });
  });

  it('fails on a status that is not 2xx (a redirect not followed) without the answer body', async () => {
    const moved = on('/moved', (_q, res) => res.writeHead(302, { location: 'http://10.0.0.1/' }).end('elsewhere'));
    await expect(fetchJson(moved, {}, opts)).resolves.toEqual({ ok: false, error: 'HTTP 302 (redirects are not followed)' });
    const broken = on('/broken', (_q, res) => res.writeHead(500).end('boom'));
    await expect(fetchJson(broken, {}, opts)).resolves.toEqual({ ok: false, error: 'HTTP 500' });
  });

  it('fails on a body over the cap, declared or sent in chunks', async () => {
    const declared = on('/declared', (_q, res) => res.writeHead(200, { 'content-length': 17 }).end('x'.repeat(17)));
    await expect(fetchJson(declared, {}, opts)).resolves.toEqual({ ok: false, error: 'the answer is larger than 16 bytes' });
    const chunked = on('/chunked', (_q, res) => {
      res.write('x'.repeat(10));
      setTimeout(() => res.end('x'.repeat(10)), 20);
    });
    await expect(fetchJson(chunked, {}, opts)).resolves.toEqual({ ok: false, error: 'the answer is larger than 16 bytes' });
  });

  it('fails when no answer ends within the timeout, and when the connection closes before the end', async () => {
    const silent = on('/silent', () => {});
    await expect(fetchJson(silent, {}, { ...opts, timeoutMs: 100 })).resolves.toEqual({ ok: false, error: 'no answer within 100 ms' });
    const cut = on('/cut', (_q, res) => {
      res.writeHead(200, { 'content-length': 10 }).write('abc');
      setTimeout(() => res.socket!.destroy(), 20);
    });
    await expect(fetchJson(cut, {}, opts)).resolves.toEqual({ ok: false, error: 'aborted' });
  });
});

describe('postWebhook: the status, and the first bytes of a failure', () => {
  it('POSTs the body to the pinned address with its headers and answers a 2xx as delivered', async () => {
    const t = on('/hook', (_q, res) => res.writeHead(204).end());
    await expect(postWebhook(t, '{"a":1}', { 'webhook-id': 'msg_1' }, opts)).resolves.toEqual({ ok: true, statusCode: 204, error: null });
    expect(seen.at(-1)).toMatchObject({
      method: 'POST',
      host: `receiver.invalid:${port}`,
      body: '{"a":1}',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'goal-tracking-webhooks/1',
        'content-length': '7',
        'webhook-id': 'msg_1',
      },
    });
  });

  it('explains a failure with the first bytes of the answer (at most the cap), a redirect as not followed', async () => {
    const broken = on('/hook-500', (_q, res) => res.writeHead(500).end('x'.repeat(40)));
    await expect(postWebhook(broken, '{}', {}, opts)).resolves.toEqual({
      ok: false,
      statusCode: 500,
      error: `HTTP 500: ${'x'.repeat(16)}`,
    });
    const moved = on('/hook-301', (_q, res) => res.writeHead(301, { location: '/elsewhere' }).end());
    await expect(postWebhook(moved, '{}', {}, opts)).resolves.toEqual({
      ok: false,
      statusCode: 301,
      error: 'HTTP 301 (redirects are not followed)',
    });
  });

  it('explains with what it read when the answer is cut short', async () => {
    const cut = on('/hook-cut', (_q, res) => {
      res.writeHead(502, { 'content-length': 10 }).write('abc');
      setTimeout(() => res.socket!.destroy(), 20);
    });
    await expect(postWebhook(cut, '{}', {}, opts)).resolves.toEqual({ ok: false, statusCode: 502, error: 'HTTP 502: abc' });
  });

  it('fails when the receiver does not answer within the timeout', async () => {
    const silent = on('/hook-silent', () => {});
    await expect(postWebhook(silent, '{}', {}, { ...opts, timeoutMs: 100 })).resolves.toEqual({
      ok: false,
      statusCode: null,
      error: 'no answer within 100 ms',
    });
  });
});
