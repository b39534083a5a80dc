import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it, inject } from 'vitest';
import { newTenant, type TenantFixture } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';
import { rawRequest } from '../support/raw-http.ts';

/** The MCP server at /mcp through the SDK's own client (contract section 15). */
const base = inject('apiUrl');

async function connect(token: string | undefined): Promise<Client> {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
    }),
  );
  return client;
}

const call = async (c: Client, name: string, args: Record<string, unknown> = {}) =>
  (await c.callTool({ name, arguments: args })) as CallToolResult & { structuredContent?: any };
const errorOf = (r: CallToolResult) => {
  expect(r.isError, JSON.stringify(r)).toBe(true);
  return JSON.parse((r.content[0] as { text: string }).text).error as { status: number; code: string };
};
const ok = (r: CallToolResult & { structuredContent?: any }) => {
  expect(r.isError ?? false, JSON.stringify(r.content)).toBe(false);
  expect(r.content[0]?.type).toBe('text');
  return r.structuredContent;
};

describe('MCP server', () => {
  let t: TenantFixture;
  let admin: Client;
  let period: string;
  const today = new Date().toISOString().slice(0, 10);
  beforeAll(async () => {
    t = await newTenant();
    admin = await connect(t.admin.token);
    const p = await t.admin.post('/rest/v2/time_periods', {
      name: 'This year',
      start_date: `${today.slice(0, 4)}-01-01`,
      end_date: `${today.slice(0, 4)}-12-31`,
    });
    period = p.body.data.record.uuid;
  });

  it('answers 401 with the resource metadata header without a token, and publishes that document', async () => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"`);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    const bad = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(bad.status).toBe(401);
    await expect(connect(undefined)).rejects.toThrow();

    const doc = await fetch(`${base}/.well-known/oauth-protected-resource`);
    expect(doc.status).toBe(200);
    expect(await doc.json()).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [expect.stringMatching(/^http/)] });
    expect((await fetch(`${base}/mcp`)).status).toBe(405);
    expect((await fetch(`${base}/mcp`, { method: 'DELETE' })).status).toBe(405);
  });

  it('names itself by its configured URL, whatever Host and x-forwarded-proto a client sends', async () => {
    const forged = { host: 'attacker.example', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'attacker.example' };
    const res = await rawRequest(`${base}/mcp`, {
      method: 'POST',
      headers: { ...forged, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"`);
    const doc = await rawRequest(`${base}/.well-known/oauth-protected-resource`, { method: 'GET', headers: forged });
    expect(doc.status).toBe(200);
    expect(JSON.parse(doc.body).resource).toBe(`${base}/mcp`);
  });

  it('lists the tools of contract section 15 with schemas and annotations', async () => {
    const { tools } = await admin.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual(
      [
        'create_checkin',
        'create_goal',
        'get_goal',
        'goal_history',
        'goals_needing_attention',
        'list_checkins',
        'list_events',
        'list_teams',
        'list_time_periods',
        'list_users',
        'search_goals',
        'update_goal',
      ].sort(),
    );
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.description!.length).toBeGreaterThan(40);
    }
    const byName = new Map(tools.map((x) => [x.name, x]));
    expect(byName.get('search_goals')!.annotations?.readOnlyHint).toBe(true);
    expect(byName.get('create_checkin')!.annotations?.readOnlyHint).toBe(false);
    expect(JSON.stringify(byName.get('search_goals')!.inputSchema)).toContain('current_status_eq');
    expect(Object.keys(byName.get('create_checkin')!.inputSchema.properties!)).toEqual(
      expect.arrayContaining(['goal_uuid', 'value', 'note', 'idempotency_key']),
    );
  });

  it('runs every tool: a check-in moves the rollup parent, a retried idempotency_key writes once', async () => {
    const obj = ok(await call(admin, 'create_goal', { kind: 'objective', title: 'Delight customers', time_period_uuid: period }));
    expect(obj.record.type).toBe('objective');
    const upd = ok(await call(admin, 'update_goal', { uuid: obj.record.uuid, progress_mode: 'rollup' }));
    expect(upd.record.progress_mode).toBe('rollup');
    const kr = ok(
      await call(admin, 'create_goal', {
        kind: 'key_result',
        title: 'NPS to 50',
        time_period_uuid: period,
        metric: { start_value: 0, target_value: 50 },
        parents: [obj.record.uuid],
      }),
    );
    const key = `ci-${kr.record.uuid}`;
    const first = ok(
      await call(admin, 'create_checkin', { goal_uuid: kr.record.uuid, value: 42, status: 'on_track', idempotency_key: key }),
    );
    const again = ok(
      await call(admin, 'create_checkin', { goal_uuid: kr.record.uuid, value: 42, status: 'on_track', idempotency_key: key }),
    );
    expect(again.record.uuid).toBe(first.record.uuid);
    expect(first.record.source).toBe('mcp');
    const checkins = ok(await call(admin, 'list_checkins', { goal_uuid: kr.record.uuid }));
    expect(checkins.records.map((c: { uuid: string }) => c.uuid)).toEqual([first.record.uuid]);

    const got = ok(await call(admin, 'get_goal', { uuid: obj.record.uuid }));
    expect(got.record.current_progress).toBe(84);
    expect(got.children.map((g: { uuid: string }) => g.uuid)).toEqual([kr.record.uuid]);
    const krView = ok(await call(admin, 'get_goal', { uuid: kr.record.uuid }));
    expect(krView.parents.map((g: { uuid: string }) => g.uuid)).toEqual([obj.record.uuid]);
    expect(krView.recent_checkins.map((c: { uuid: string }) => c.uuid)).toEqual([first.record.uuid]);

    const found = ok(
      await call(admin, 'search_goals', { kind: 'key_result', title_contains: 'nps', filters: { current_status_eq: 'on_track' } }),
    );
    expect(found.records.map((g: { uuid: string }) => g.uuid)).toEqual([kr.record.uuid]);
    const all = ok(await call(admin, 'search_goals', {}));
    expect(all.pages.map((p: { kind: string }) => p.kind)).toEqual(['objective', 'key_result', 'initiative']);
    // history comes from the change stream: the check-in's point, once the stream has recorded it
    await eventually(async () => {
      const history = ok(await call(admin, 'goal_history', { uuid: kr.record.uuid }));
      expect(history.records.map((r: { cause: string; value: number; progress: number }) => [r.cause, r.value, r.progress])).toEqual([
        ['checkin', 42, 84],
      ]);
    });
    expect(ok(await call(admin, 'list_time_periods')).records.map((p: { uuid: string }) => p.uuid)).toContain(period);
    expect(ok(await call(admin, 'list_teams')).type).toBe('team');
    const users = ok(await call(admin, 'list_users', {}));
    expect(users.records.map((u: { uuid: string }) => u.uuid)).toContain(t.adminUuid);

    // a key result at 0 % of a goal half way through its dates is behind pace
    const behind = ok(
      await call(admin, 'create_goal', {
        kind: 'key_result',
        title: 'Behind one',
        time_period_uuid: period,
        start_date: `${today.slice(0, 4)}-01-01`,
        end_date: `${today.slice(0, 4)}-12-31`,
        metric: { start_value: 0, target_value: 10 },
      }),
    );
    ok(await call(admin, 'create_checkin', { goal_uuid: behind.record.uuid, value: 0 }));
    const attention = ok(await call(admin, 'goals_needing_attention', { time_period_uuid: period }));
    const entry = attention.goals.find((g: { record: { uuid: string } }) => g.record.uuid === behind.record.uuid);
    if (behind.record.expected_progress >= 10) expect(entry.reasons.map((r: { code: string }) => r.code)).toContain('behind_pace');
    else expect(entry).toBeUndefined();
  });

  it('pages by cursor (contract 18) and reads the event feed', async () => {
    const made: string[] = [];
    for (const n of [1, 2, 3])
      made.push(ok(await call(admin, 'create_goal', { kind: 'initiative', title: `Paged ${n}`, time_period_uuid: period })).record.uuid);
    // every initiative of this tenant, one per page, by cursor: each exactly once, in creation order
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = ok(await call(admin, 'search_goals', { kind: 'initiative', per_page: 1, ...(cursor ? { cursor } : {}) }));
      seen.push(...page.records.map((g: { uuid: string }) => g.uuid));
      cursor = page.pages[0].pagy.next_cursor ?? undefined;
    } while (cursor);
    expect(seen.filter((u) => made.includes(u))).toEqual(made);
    expect(new Set(seen).size).toBe(seen.length);
    const first = ok(await call(admin, 'search_goals', { kind: 'initiative', per_page: 1 }));
    const noKind = await call(admin, 'search_goals', { cursor: first.pages[0].pagy.next_cursor });
    expect(errorOf(noKind)).toMatchObject({ status: 400 });

    // the goals just made, in the feed once the stream has recorded them; after= the first resumes past it
    const created = await eventually(async () => {
      const feed = ok(await call(admin, 'list_events', { types: ['goal.created'], per_page: 100 }));
      const mine = feed.records.filter((e: { data: { record: { uuid: string } } }) => made.includes(e.data.record.uuid));
      expect(mine.map((e: { data: { record: { uuid: string } } }) => e.data.record.uuid)).toEqual(made);
      return mine as Array<{ id: string; type: string }>;
    });
    expect(created.map((e) => e.type)).toEqual(['goal.created', 'goal.created', 'goal.created']);
    const after = ok(await call(admin, 'list_events', { after: created[0]!.id, types: ['goal.created'], per_page: 100 }));
    expect(after.records.map((e: { id: string }) => e.id).filter((id: string) => created.some((c) => c.id === id))).toEqual(
      created.slice(1).map((e) => e.id),
    );
    // a member's token carries no events:read: refused as a tool result
    const member = await t.user({ role: 'member' });
    expect(errorOf(await call(await connect(member.api.token), 'list_events', {}))).toMatchObject({
      status: 403,
      code: 'insufficient_scope',
    });
  });

  it('refuses as tool results: bad arguments, a member without rights, another tenant', async () => {
    const badArgs = await call(admin, 'create_checkin', { goal_uuid: 'x', value: 'high' });
    expect(errorOf(badArgs).status).toBe(400);
    const obj = ok(
      await call(admin, 'create_goal', { kind: 'objective', title: 'Admin only', time_period_uuid: period, visibility: 'public' }),
    );
    const viewer = await t.user({ role: 'viewer' });
    const viewerClient = await connect(viewer.api.token);
    expect(errorOf(await call(viewerClient, 'create_goal', { kind: 'objective', title: 'Nope', time_period_uuid: period })).status).toBe(
      403,
    );
    const member = await t.user({ role: 'member' });
    const memberClient = await connect(member.api.token);
    expect(errorOf(await call(memberClient, 'create_checkin', { goal_uuid: obj.record.uuid, value: 1 })).status).toBe(403);

    const other = await newTenant();
    const otherClient = await connect(other.admin.token);
    expect(errorOf(await call(otherClient, 'get_goal', { uuid: obj.record.uuid }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(errorOf(await call(otherClient, 'list_checkins', { goal_uuid: obj.record.uuid })).status).toBe(404);
    await expect(admin.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/);
  });
});
