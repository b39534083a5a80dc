import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it, inject } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { newestOf } from '#shared/domain/checkins/service.ts';
import { MAX_BODY_BYTES, MAX_HEADER_BYTES } from '#shared/http/transport.ts';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { newTenant, type TenantFixture } from '../support/api.ts';
import { createPeriod, goal } from './goals.fixture.ts';

/**
 * /mcp keeps every REST guarantee (contract sections 15 and 19): one JSON-RPC message a POST (an array is
 * refused -32600 before anything runs), each tool call charged what its REST call costs and nothing else
 * charged, and the body read by the REST rules (sizes, JSON numbers, strings, keys), a refusal in the REST
 * error body's terms. Raw POSTs where the SDK's client would not send what is tested; its client where one is.
 */
const base = inject('apiUrl');
/**
 * A connection a request: the SDK's client compiles each tool's output schema on a listing, seconds of CPU under
 * load, during which a pooled keep-alive socket can pass the local stack's 5 s idle timeout unnoticed; the next
 * request on it then fails (`other side closed`) before the server reads it.
 */
const NO_KEEP_ALIVE = { connection: 'close' };
const MCP_HEADERS = {
  ...NO_KEEP_ALIVE,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function post(token: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...MCP_HEADERS, ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const toolCall = (id: number, name: string, args: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** The tool result of a raw tools/call answer (HTTP 200, a JSON-RPC result with the call's id). */
function resultOf(res: Answer, id: number): CallToolResult & { structuredContent?: any } {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toMatchObject({ jsonrpc: '2.0', id });
  expect(res.body.error).toBeUndefined();
  return res.body.result;
}

/** A refused tool result's REST error body, request_id left out (each request has its own). */
function refusalOf(r: CallToolResult): unknown {
  expect(r.isError, JSON.stringify(r)).toBe(true);
  expect(r.content).toHaveLength(1);
  const { error } = JSON.parse((r.content[0] as { text: string }).text) as { error: Record<string, unknown> };
  expect(error.request_id).toEqual(expect.any(String));
  const { request_id: _, ...rest } = error;
  return rest;
}

/** A REST answer's error body, request_id left out. */
function restErrorOf(body: { error: Record<string, unknown> }): unknown {
  const { request_id: _, ...rest } = body.error;
  return rest;
}

const RATE_LIMITED = { status: 429, code: 'rate_limited', message: expect.any(String), details: [] };

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'e2e-door', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}`, ...NO_KEEP_ALIVE } },
    }),
  );
  return client;
}

const checkinsOf = (t: TenantFixture, goalUuid: string) => newestOf({ tenantId: t.tenantUuid, db: baseDb() }, goalUuid, 100);

describe('/mcp: one message a POST, each tool call charged as its REST call (contract 19)', () => {
  it('refuses a JSON array with -32600 before anything runs: no check-in written, no token of the budget spent', async () => {
    const t = await newTenant();
    // One token per 100 s, so nothing refills during the test; the user may spend the whole tenant's burst.
    await runAdmin(['set-limits', '--tenant', t.tenantUuid, '--rps', '0.01', '--burst', '6', '--user-rps', '0.01', '--user-burst', '6']);
    const year = new Date().toISOString().slice(0, 4);
    const period = await createPeriod(t.admin, 'Year', `${year}-01-01`, `${year}-12-31`); // 1 of 6
    const kr = await goal(t.admin, 'key_results', {
      title: 'Batched',
      time_period_uuid: period.uuid,
      metric: { start_value: 0, target_value: 100 },
    }); // 2 of 6: 4 left

    const token = t.admin.token!;
    const batch = Array.from({ length: 30 }, (_, i) => toolCall(i + 1, 'create_checkin', { goal_uuid: kr.uuid, value: i + 1 }));
    for (const body of [batch, batch.slice(0, 1), []]) {
      const res = await post(token, JSON.stringify(body));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Invalid Request: a POST carries one JSON-RPC message (MCP 2025-06-18 has no batches)' },
        id: null,
      });
      expect(res.headers.get('ratelimit')).toBeNull(); // the limiter was never asked
    }
    expect(await checkinsOf(t, kr.uuid)).toEqual([]);

    // The same 30 calls, one a POST: exactly the 4 tokens left are served, each its check-in; every other call is
    // the REST 429 as a refused tool result, and writes nothing.
    const results: Array<CallToolResult & { structuredContent?: any }> = [];
    for (let i = 0; i < 30; i++)
      results.push(
        resultOf(await post(token, JSON.stringify(toolCall(i + 1, 'create_checkin', { goal_uuid: kr.uuid, value: i + 1 }))), i + 1),
      );
    expect(results.map((r) => r.isError ?? false)).toEqual([...Array(4).fill(false), ...Array(26).fill(true)]);
    for (const refused of results.slice(4)) expect(refusalOf(refused)).toEqual(RATE_LIMITED);
    const served = results.slice(0, 4).map((r) => r.structuredContent.record as { uuid: string; value: number });
    expect(served.map((c) => c.value)).toEqual([1, 2, 3, 4]);
    expect((await checkinsOf(t, kr.uuid)).map((c) => c.id).sort()).toEqual(served.map((c) => c.uuid).sort());
  });

  it('charges each tool call one token, and initialize, tools/list, ping and notifications none', async () => {
    const t = await newTenant();
    await runAdmin(['set-limits', '--tenant', t.tenantUuid, '--rps', '0.01', '--burst', '4', '--user-rps', '0.01', '--user-burst', '4']);
    const token = t.admin.token!;
    // the SDK's client: initialize and notifications/initialized, the listing and a ping; then raw listings
    // (the client compiles every tool's output schema on each listing: slow, and once is enough here)
    const client = await connect(token);
    expect((await client.listTools()).tools).toHaveLength(12);
    expect(await client.ping()).toEqual({});
    for (let id = 1; id <= 3; id++) {
      const raw = await post(token, JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' }));
      expect(raw.status).toBe(200);
      expect(raw.body.result.tools).toHaveLength(12);
      expect(raw.headers.get('ratelimit')).toBeNull(); // uncharged: the limiter was not asked
    }

    // the whole burst is still there: 4 calls served, the 5th to 30th refused with the REST 429 body
    const calls: Array<CallToolResult & { structuredContent?: any }> = [];
    for (let i = 0; i < 30; i++) calls.push((await client.callTool({ name: 'list_time_periods', arguments: {} })) as CallToolResult);
    expect(calls.map((r) => r.isError ?? false)).toEqual([...Array(4).fill(false), ...Array(26).fill(true)]);
    for (const refused of calls.slice(4)) expect(refusalOf(refused)).toEqual(RATE_LIMITED);
    // a tool call's answer carries the limiter's headers, as a REST answer does; the refusal its Retry-After
    const refused = await post(token, JSON.stringify(toolCall(31, 'list_time_periods', {})));
    expect(refusalOf(resultOf(refused, 31))).toEqual(RATE_LIMITED);
    expect(refused.headers.get('ratelimit')).toMatch(/^"user";r=0;t=\d+, "tenant";r=\d+;t=\d+$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // with the budget spent, the protocol still answers: a new client connects and pings, the listing answers
    expect(await (await connect(token)).ping()).toEqual({});
    expect((await post(token, JSON.stringify({ jsonrpc: '2.0', id: 32, method: 'tools/list' }))).body.result.tools).toHaveLength(12);
  });

  it('refuses a tool call outside the token scope before the limiter, as REST does (no token spent)', async () => {
    const t = await newTenant();
    await runAdmin(['set-limits', '--tenant', t.tenantUuid, '--rps', '0.01', '--burst', '4', '--user-rps', '0.01', '--user-burst', '2']);
    const member = await t.user({ role: 'member' }); // 1 of the admin's, 1 of the tenant's 4
    const client = await connect(member.api.token!);
    for (let i = 0; i < 5; i++) {
      const r = (await client.callTool({ name: 'list_events', arguments: {} })) as CallToolResult;
      expect(refusalOf(r)).toMatchObject({ status: 403, code: 'insufficient_scope' });
    }
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/);
    // the member's 2 are untouched
    const calls: CallToolResult[] = [];
    for (let i = 0; i < 3; i++) calls.push((await client.callTool({ name: 'list_time_periods', arguments: {} })) as CallToolResult);
    expect(calls.map((r) => r.isError ?? false)).toEqual([false, false, true]);
    expect(refusalOf(calls[2]!)).toEqual(RATE_LIMITED);
  });
});

describe('/mcp: a service account narrowed after its token was issued (contract 19)', () => {
  it('refuses a tool outside the account`s scopes as they are now with 403, before the limiter', async () => {
    const t = await newTenant();
    await runAdmin(['set-limits', '--tenant', t.tenantUuid, '--rps', '0.01', '--burst', '8', '--user-rps', '0.01', '--user-burst', '8']);
    const account = (
      await t.admin.post('/service_accounts', { name: 'assistant', scopes: ['goals:read', 'goals:write', 'directory:read'] })
    ).body.data.record as { uuid: string }; // tenant: 1 of 8
    const year = new Date().toISOString().slice(0, 4);
    const period = await createPeriod(t.admin, 'Year', `${year}-01-01`, `${year}-12-31`); // 2
    const kr = await goal(t.admin, 'key_results', {
      title: 'Narrowed',
      time_period_uuid: period.uuid,
      metric: { start_value: 0, target_value: 10 },
    }); // 3
    const { token } = (await runAdmin(['issue-token', '--tenant', t.tenantUuid, '--service-account', account.uuid])) as { token: string };
    // the token claims goals:write; the account no longer holds it
    expect((await t.admin.put(`/service_accounts/${account.uuid}`, { scopes: ['goals:read', 'directory:read'] })).status).toBe(200); // 4: 4 left
    for (let id = 1; id <= 5; id++) {
      const r = resultOf(await post(token, JSON.stringify(toolCall(id, 'create_checkin', { goal_uuid: kr.uuid, value: id }))), id);
      expect(refusalOf(r)).toEqual({
        status: 403,
        code: 'insufficient_scope',
        message: expect.stringMatching(/goals:write/),
        details: [{ field: 'scope', code: 'insufficient_scope', message: 'needs goals:write' }],
      });
    }
    expect(await checkinsOf(t, kr.uuid)).toEqual([]);
    // the five refusals cost nothing: the tenant's 4 left are served, the next call is the 429
    const served: boolean[] = [];
    for (let id = 6; id <= 10; id++)
      served.push(!(resultOf(await post(token, JSON.stringify(toolCall(id, 'list_time_periods', {}))), id).isError ?? false));
    expect(served).toEqual([true, true, true, true, false]);
  });

  it('refuses the POST itself (HTTP 403) once the account no longer holds goals:read, as a token without it', async () => {
    const t = await newTenant();
    const account = (await t.admin.post('/service_accounts', { name: 'reader', scopes: ['goals:read', 'directory:read'] })).body.data
      .record as { uuid: string };
    const { token } = (await runAdmin(['issue-token', '--tenant', t.tenantUuid, '--service-account', account.uuid])) as { token: string };
    expect(resultOf(await post(token, JSON.stringify(toolCall(1, 'list_users', {}))), 1).isError ?? false).toBe(false);
    expect((await t.admin.put(`/service_accounts/${account.uuid}`, { scopes: ['directory:read'] })).status).toBe(200);
    for (const message of [toolCall(2, 'list_users', {}), { jsonrpc: '2.0', id: 3, method: 'tools/list' }]) {
      const res = await post(token, JSON.stringify(message));
      expect(res.status).toBe(403);
      expect(res.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="goals:read"');
      expect(res.body.error).toMatchObject({ status: 403, code: 'insufficient_scope' });
    }
  });
});

describe('/mcp: the body is read by the REST rules (contract 11, 19; docs/architecture.md "Hostile input")', () => {
  let t: TenantFixture;
  let token: string;
  let kr: { uuid: string };
  beforeAll(async () => {
    t = await newTenant();
    token = t.admin.token!;
    const year = new Date().toISOString().slice(0, 4);
    const period = await createPeriod(t.admin, 'Year', `${year}-01-01`, `${year}-12-31`);
    kr = await goal(t.admin, 'key_results', {
      title: 'Hostile',
      time_period_uuid: period.uuid,
      metric: { start_value: 0, target_value: 100 },
    });
  });

  /** The arguments, as raw JSON text, of a create_checkin on the goal. */
  const args = (rest: string) => `{"goal_uuid":"${kr.uuid}",${rest}}`;
  const callText = (id: number, argumentsText: string) =>
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"create_checkin","arguments":${argumentsText}}}`;

  it.each([
    ['a number beyond a double (1e400)', '"value":1e400'],
    ['a number past 2^53 (9007199254740993)', '"value":9007199254740993'],
    ['more digits than a double keeps', '"value":1.00000000000000000001'],
    ['a 100-digit number', `"value":${'9'.repeat(100)}`],
    ['a lone surrogate in a string', '"note":"\\ud800 alone"'],
    ['a lone surrogate in a key', '"\\udc00":1'],
    ['a NUL in a string', '"note":"a\\u0000b"'],
    ['a __proto__ key', '"__proto__":{"role":"admin"}'],
    ['a constructor.prototype path', '"constructor":{"prototype":{"role":"admin"}}'],
  ])('answers a tool call whose arguments hold %s with the REST refusal of the same body, writing nothing', async (_, rest) => {
    const rest_ = await t.admin.post('/rest/v2/checkins', args(rest));
    expect(rest_.status).toBeGreaterThanOrEqual(400);
    expect(rest_.status).toBeLessThan(500);
    const res = await post(token, callText(3, args(rest)));
    expect(refusalOf(resultOf(res, 3))).toEqual(restErrorOf(rest_.body));
    expect(await checkinsOf(t, kr.uuid)).toEqual([]);
  });

  it.each([
    ['a number beyond a double as the id', '{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}', 'id'],
    ['a long number as the id', `{"jsonrpc":"2.0","id":${'1'.repeat(70)},"method":"tools/list"}`, 'id'],
    ['a lone surrogate in the method', '{"jsonrpc":"2.0","id":1,"method":"tools/\\ud800"}', 'method'],
    [
      'a lone surrogate in a tool name',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\\ud800","arguments":{}}}',
      'params.name',
    ],
    [
      'a long number in _meta',
      '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":9007199254740993}}}',
      'params._meta.progressToken',
    ],
  ])('answers an envelope holding %s with JSON-RPC -32600 and the REST error body as its data', async (_, text, field) => {
    const res = await post(token, text);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringMatching(/^Invalid Request: /) },
    });
    expect(res.body.error.data).toMatchObject({ status: 422, code: 'validation_failed', request_id: expect.any(String) });
    expect(res.body.error.data.details.map((d: { field: string }) => d.field)).toEqual([field]);
  });

  it('answers 406/415 before reading the body, then a body that is not JSON with -32700, hostile arguments and envelope with -32600', async () => {
    for (const text of ['{"jsonrpc":"2.0","id":1,', 'not json', '', '{"a":1}{"b":2}']) {
      const res = await post(token, text);
      expect(res.status, text).toBe(400);
      expect(res.body, text).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    }
    // the transport's own refusals come first, as REST's 415 before its body read: not JSON and a batch, unread
    for (const [headers, status] of [
      [{ 'content-type': 'text/plain' }, 415],
      [{ accept: 'application/json' }, 406],
    ] as const)
      for (const text of ['not json', `[${callText(1, args('"value":1'))}]`]) {
        const res = await post(token, text, headers);
        expect([res.status, res.body]).toEqual([
          status,
          { jsonrpc: '2.0', error: { code: -32000, message: expect.any(String) }, id: null },
        ]);
      }
    // broken both in the envelope and in the arguments: the envelope's refusal, nothing runs
    const both = await post(
      token,
      `{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"create_checkin","arguments":${args('"value":1e400')}}}`,
    );
    expect(both.status).toBe(400);
    expect(both.body.error.code).toBe(-32600);
    expect(both.body.error.data.details.map((d: { field: string }) => d.field)).toEqual(['id']);
    expect(await checkinsOf(t, kr.uuid)).toEqual([]);
  });

  it('refuses a body over 1 MiB with 413 and headers over 8 KiB with 431, in the REST shape', async () => {
    const big = callText(1, args(`"note":"${'x'.repeat(MAX_BODY_BYTES)}"`));
    const tooBig = await post(token, big);
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error).toMatchObject({ status: 413, code: 'payload_too_large' });
    // exactly 1 MiB + 1 byte
    const padded = callText(1, args(`"note":"${'y'.repeat(MAX_BODY_BYTES + 1 - callText(1, args('"note":""')).length)}"`));
    expect(Buffer.byteLength(padded)).toBe(MAX_BODY_BYTES + 1);
    expect((await post(token, padded)).status).toBe(413);
    const headers = await post(token, callText(1, args('"value":1')), { 'x-padding': 'h'.repeat(MAX_HEADER_BYTES) });
    expect(headers.status).toBe(431);
    expect(headers.body.error).toMatchObject({ status: 431, code: 'headers_too_large' });
    expect(await checkinsOf(t, kr.uuid)).toEqual([]);
  });

  it('answers no input with a 5xx or a JSON-RPC internal error', async () => {
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const bodies = [
      callText(1, `{"goal_uuid":"${kr.uuid}","labels":${deep(20_000)}}`),
      callText(1, deep(20_000)),
      deep(20_000),
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${deep(5_000)}}`,
      callText(1, '"not an object"'),
      callText(1, 'null'),
      callText(1, `{"goal_uuid":"${kr.uuid}","value":${'0'.repeat(100_000)}1}`),
      '{"jsonrpc":"2.0","id":1,"method":"tools/call"}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_checkin","arguments":{"__proto__":null}}}',
      '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"create_checkin","arguments":{}}}',
      '{"jsonrpc":"2.0","id":{"__proto__":1},"method":"ping"}',
      '"just a string"',
      'null',
      '123',
    ];
    for (const text of bodies) {
      const res = await post(token, text);
      expect(res.status, text.slice(0, 120)).toBeLessThan(500);
      expect(res.body?.error?.code, text.slice(0, 120)).not.toBe(-32603);
      if (res.body?.result?.isError) expect(JSON.parse(res.body.result.content[0].text).error.status).toBeLessThan(500);
    }
    expect(await checkinsOf(t, kr.uuid)).toEqual([]);
  });
});
