import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it, inject } from 'vitest';
import { newTenant, type Res, type TenantFixture } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';
import { withinListLag } from '../support/list-lag.ts';
import { rawRequest } from '../support/raw-http.ts';

/** The MCP server at /mcp through the SDK's own client (contract section 15). */
const base = inject('apiUrl');

/**
 * A connection a request: the SDK's client compiles each tool's output schema on a listing, seconds of CPU under
 * load, during which a pooled keep-alive socket can pass the local stack's 5 s idle timeout unnoticed; the next
 * request on it then fails (`other side closed`) before the server reads it.
 */
const NO_KEEP_ALIVE = { connection: 'close' };

async function connect(token: string | undefined): Promise<Client> {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { ...NO_KEEP_ALIVE, ...(token ? { authorization: `Bearer ${token}` } : {}) } },
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
    // every scope a tool needs (shared/mcp/tool.ts), so a client can ask the issuer for what it will use
    expect(await doc.json()).toEqual({
      resource: `${base}/mcp`,
      authorization_servers: [inject('issuerUrl')],
      bearer_methods_supported: ['header'],
      scopes_supported: ['goals:read', 'goals:write', 'directory:read', 'events:read'],
      resource_name: 'Goal-tracking API (MCP)',
    });
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
    // the REST body's fields (CheckinCreateBody), and idempotency_key for its Idempotency-Key
    expect(Object.keys(byName.get('create_checkin')!.inputSchema.properties!)).toEqual([
      'goal_uuid',
      'value',
      'status',
      'note',
      'score',
      'checkin_date',
      'labels',
      'idempotency_key',
    ]);
    expect(byName.get('create_checkin')!.inputSchema.required).toEqual(['goal_uuid']);
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
    // lists and filters reflect the writes within 2 s (contract 14); a goal read by uuid, at once
    await withinListLag(async () => {
      const checkins = ok(await call(admin, 'list_checkins', { goal_uuid: kr.record.uuid }));
      expect(checkins.records.map((c: { uuid: string }) => c.uuid)).toEqual([first.record.uuid]);
    });

    const got = ok(await call(admin, 'get_goal', { uuid: obj.record.uuid }));
    expect(got.record.current_progress).toBe(84);
    // its children are a list (the goals whose links name it)
    await withinListLag(async () => {
      const view = ok(await call(admin, 'get_goal', { uuid: obj.record.uuid }));
      expect(view.children.map((g: { uuid: string }) => g.uuid)).toEqual([kr.record.uuid]);
    });
    const krView = ok(await call(admin, 'get_goal', { uuid: kr.record.uuid }));
    expect(krView.parents.map((g: { uuid: string }) => g.uuid)).toEqual([obj.record.uuid]);
    // its recent check-ins are a list
    await withinListLag(async () => {
      const view = ok(await call(admin, 'get_goal', { uuid: kr.record.uuid }));
      expect(view.recent_checkins.map((c: { uuid: string }) => c.uuid)).toEqual([first.record.uuid]);
    });

    await withinListLag(async () => {
      const found = ok(
        await call(admin, 'search_goals', { kind: 'key_result', title_contains: 'nps', filters: { current_status_eq: 'on_track' } }),
      );
      expect(found.records.map((g: { uuid: string }) => g.uuid)).toEqual([kr.record.uuid]);
    });
    const all = ok(await call(admin, 'search_goals', {}));
    expect(all.pages.map((p: { kind: string }) => p.kind)).toEqual(['objective', 'key_result', 'initiative']);
    // history comes from the change stream: the check-in's point, once the stream has recorded it
    await eventually(async () => {
      const history = ok(await call(admin, 'goal_history', { uuid: kr.record.uuid }));
      expect(history.records.map((r: { cause: string; value: number; progress: number }) => [r.cause, r.value, r.progress])).toEqual([
        ['checkin', 42, 84],
      ]);
    });
    // the tenant's one period, its one team and its one user (the admin), each exactly
    // (lists: each within 2 s of the write that made it)
    await withinListLag(async () => {
      const periods = ok(await call(admin, 'list_time_periods'));
      expect(periods.records.map((p: { uuid: string }) => p.uuid)).toEqual([period]);
    });
    const team = (await t.admin.post('/rest/v2/teams', { name: 'Growth' })).body.data.record as { uuid: string };
    await withinListLag(async () => {
      const teams = ok(await call(admin, 'list_teams'));
      expect([teams.type, teams.records.map((x: { uuid: string }) => x.uuid)]).toEqual(['team', [team.uuid]]);
    });
    await withinListLag(async () => {
      const users = ok(await call(admin, 'list_users', {}));
      expect(users.records.map((u: { uuid: string }) => u.uuid)).toEqual([t.adminUuid]);
    });
  });

  it('pages by cursor (contract 18) and reads the event feed', async () => {
    const made: string[] = [];
    for (const n of [1, 2, 3])
      made.push(ok(await call(admin, 'create_goal', { kind: 'initiative', title: `Paged ${n}`, time_period_uuid: period })).record.uuid);
    // every initiative of this tenant, one per page, by cursor: each exactly once, in creation order (a list: it
    // reflects the creates within 2 s, contract 14)
    await withinListLag(async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = ok(await call(admin, 'search_goals', { kind: 'initiative', per_page: 1, ...(cursor ? { cursor } : {}) }));
        seen.push(...page.records.map((g: { uuid: string }) => g.uuid));
        cursor = page.pages[0].pagy.next_cursor ?? undefined;
      } while (cursor);
      expect(seen).toEqual(made); // the tenant's only initiatives
    });
    const first = ok(await call(admin, 'search_goals', { kind: 'initiative', per_page: 1 }));
    const noKind = await call(admin, 'search_goals', { cursor: first.pages[0].pagy.next_cursor });
    expect(errorOf(noKind)).toEqual({
      status: 400,
      code: 'bad_request',
      message: 'cursor pages one kind: send kind with it',
      details: [{ field: 'kind', code: 'required', message: 'the kind whose pages[].pagy.next_cursor this is' }],
      request_id: expect.any(String),
    });

    // the goals just made, each once in the feed once the stream has recorded them; after= the first resumes past
    // it. The feed is in recording order (commit order per record only, contract 18): a projection retried after
    // an injected fault records its goal's event after a later goal's, so the three are compared as a set.
    const created = await eventually(async () => {
      const feed = ok(await call(admin, 'list_events', { types: ['goal.created'], per_page: 100 }));
      const mine = feed.records.filter((e: { data: { record: { uuid: string } } }) => made.includes(e.data.record.uuid));
      expect(mine.map((e: { data: { record: { uuid: string } } }) => e.data.record.uuid).sort()).toEqual([...made].sort());
      return mine as Array<{ id: string; type: string }>;
    });
    expect(created.map((e) => e.type)).toEqual(['goal.created', 'goal.created', 'goal.created']);
    // every goal.created after the first initiative's is the other two's (the tenant's earlier goals came before)
    const after = ok(await call(admin, 'list_events', { after: created[0]!.id, types: ['goal.created'], per_page: 100 }));
    expect(after.records.map((e: { id: string }) => e.id)).toEqual(created.slice(1).map((e) => e.id));
    // a member's token carries no events:read: refused as a tool result
    const member = await t.user({ role: 'member' });
    expect(errorOf(await call(await connect(member.api.token), 'list_events', {}))).toEqual({
      status: 403,
      code: 'insufficient_scope',
      message: expect.stringMatching(/events:read/),
      details: [{ field: 'scope', code: 'insufficient_scope', message: 'needs events:read' }],
      request_id: expect.any(String),
    });
  });

  it('refuses as tool results, each the REST error body of the same request: bad arguments, a member without rights, another tenant', async () => {
    /** The tool's refusal is its REST call's error body, exactly (but for the request id). */
    const sameAsRest = async (r: CallToolResult, rest: Promise<Res>, status: number) => {
      const { request_id: _, ...refusal } = errorOf(r) as unknown as Record<string, unknown>;
      const answer = await rest;
      expect(answer.status).toBe(status);
      const { request_id: __, ...restError } = answer.body.error as Record<string, unknown>;
      expect(refusal).toEqual(restError);
    };
    const bad = { goal_uuid: 'x', value: 'high' };
    await sameAsRest(await call(admin, 'create_checkin', bad), t.admin.post('/rest/v2/checkins', bad), 400);
    const obj = ok(
      await call(admin, 'create_goal', { kind: 'objective', title: 'Admin only', time_period_uuid: period, visibility: 'public' }),
    );
    const viewer = await t.user({ role: 'viewer' });
    const viewerClient = await connect(viewer.api.token);
    await sameAsRest(
      await call(viewerClient, 'create_goal', { kind: 'objective', title: 'Nope', time_period_uuid: period }),
      viewer.api.post('/rest/v2/objectives', { title: 'Nope', time_period_uuid: period }),
      403,
    );
    const member = await t.user({ role: 'member' });
    const memberClient = await connect(member.api.token);
    await sameAsRest(
      await call(memberClient, 'create_checkin', { goal_uuid: obj.record.uuid, value: 1 }),
      member.api.post('/rest/v2/checkins', { goal_uuid: obj.record.uuid, value: 1 }),
      403,
    );

    const other = await newTenant();
    const otherClient = await connect(other.admin.token);
    // by uuid alone, of any kind: no REST route reads a goal of unknown kind, so the 404 names a goal
    const notFound = {
      status: 404,
      code: 'not_found',
      message: `Goal ${obj.record.uuid} not found`,
      details: [],
      request_id: expect.any(String),
    };
    expect(errorOf(await call(otherClient, 'get_goal', { uuid: obj.record.uuid }))).toEqual(notFound);
    expect(errorOf(await call(otherClient, 'list_checkins', { goal_uuid: obj.record.uuid }))).toEqual(notFound);
    await expect(admin.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/);
    // nothing was written by the refused calls: the tenant's check-ins on the objective are none
    expect(ok(await call(admin, 'list_checkins', { goal_uuid: obj.record.uuid })).records).toEqual([]);
  });
});

describe('goals_needing_attention over MCP: exactly the goals behind pace or 14 days without a check-in, worst first', () => {
  it('answers the exact list, in order, with each goal reasons, and leaves out closed, postponed and other periods', async () => {
    const t = await newTenant();
    const admin = await connect(t.admin.token);
    const DAY = 86_400_000;
    const setupDay = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
    const daysAgo = (n: number) => new Date(setupDay - n * DAY).toISOString().slice(0, 10);
    const period = async (name: string) =>
      (await t.admin.post('/rest/v2/time_periods', { name, start_date: daysAgo(300), end_date: daysAgo(-300) })).body.data.record
        .uuid as string;
    const [p, q] = [await period('This one'), await period('Another')];
    // every goal ran from 200 to 100 days ago: 100 % was expected by now, whatever day the test runs
    const kr = async (title: string, time_period_uuid = p) =>
      ok(
        await call(admin, 'create_goal', {
          kind: 'key_result',
          title,
          time_period_uuid,
          start_date: daysAgo(200),
          end_date: daysAgo(100),
          metric: { start_value: 0, target_value: 100 },
        }),
      ).record as { uuid: string; title: string };
    const checkIn = async (g: { uuid: string }, value: number, ago: number, status = 'in_progress') =>
      ok(await call(admin, 'create_checkin', { goal_uuid: g.uuid, value, status, checkin_date: daysAgo(ago) }));

    const behindFar = await kr('Behind far');
    await checkIn(behindFar, 10, 0);
    const behindStale = await kr('Behind and stale');
    await checkIn(behindStale, 10, 30);
    const behindLittle = await kr('Behind a little');
    await checkIn(behindLittle, 60, 0);
    await checkIn(await kr('On pace'), 95, 0); // 95 > 100 - 10: on pace
    const staleLong = await kr('Stale long');
    await checkIn(staleLong, 95, 40);
    const staleB = await kr('Stale B');
    await checkIn(staleB, 95, 20);
    const staleA = await kr('Stale A');
    await checkIn(staleA, 95, 20);
    await checkIn(await kr('Checked in 5 days ago'), 95, 5);
    await checkIn(await kr('Closed, behind and stale'), 10, 30, 'closed');
    await checkIn(await kr('Postponed, behind and stale'), 10, 30, 'postponed');
    await kr('Never checked in, created today'); // no progress, so no pace; not 14 days old
    const elsewhere = await kr('Elsewhere, behind', q);
    await checkIn(elsewhere, 10, 0);

    const attention = async (args: Record<string, unknown>) => {
      for (;;) {
        const before = new Date().toISOString().slice(0, 10);
        const goals = ok(await call(admin, 'goals_needing_attention', args)).goals as Array<{
          record: { uuid: string; title: string; current_progress: number; expected_progress: number };
          reasons: Array<{ code: string; message: string }>;
          progress_gap: number;
          days_without_checkin: number | null;
        }>;
        // the days since setup, as the server counted them (a UTC midnight between the two reads: ask again)
        if (new Date().toISOString().slice(0, 10) === before) return { goals, shift: (Date.parse(`${before}T00:00:00Z`) - setupDay) / DAY };
      }
    };
    const behind = (current: number) => ({ code: 'behind_pace', message: `Progress is ${current}%, but 100% was expected by today` });
    const stale = (ago: number, shift: number) => ({
      code: 'no_recent_checkin',
      message: `No check-in for ${ago + shift} days (last on ${daysAgo(ago)})`,
    });
    const entry = (g: { uuid: string; title: string }, reasons: unknown[], progress_gap: number, days: number) => ({
      uuid: g.uuid,
      title: g.title,
      reasons,
      progress_gap,
      days_without_checkin: days,
    });
    const flat = (goals: Awaited<ReturnType<typeof attention>>['goals']) =>
      goals.map((g) => ({
        uuid: g.record.uuid,
        title: g.record.title,
        reasons: g.reasons,
        progress_gap: g.progress_gap,
        days_without_checkin: g.days_without_checkin,
      }));

    // worst first: the furthest behind, then the longest without a check-in, then by title
    const expected = (shift: number, withElsewhere: boolean) => [
      entry(behindStale, [behind(10), stale(30, shift)], 90, 30 + shift),
      entry(behindFar, [behind(10)], 90, shift),
      ...(withElsewhere ? [entry(elsewhere, [behind(10)], 90, shift)] : []), // as behind and as fresh as "Behind far"
      entry(behindLittle, [behind(60)], 40, shift),
      entry(staleLong, [stale(40, shift)], 0, 40 + shift),
      entry(staleA, [stale(20, shift)], 0, 20 + shift),
      entry(staleB, [stale(20, shift)], 0, 20 + shift),
    ];
    // a list: it reflects the writes above within 2 s (contract 14)
    await withinListLag(async () => {
      const inP = await attention({ time_period_uuid: p });
      expect(flat(inP.goals)).toEqual(expected(inP.shift, false));
      expect(inP.goals.map((g) => [g.record.current_progress, g.record.expected_progress])).toEqual([
        [10, 100],
        [10, 100],
        [60, 100],
        [95, 100],
        [95, 100],
        [95, 100],
      ]);
    });
    // without the period: the other period's goal too, in its place
    await withinListLag(async () => {
      const all = await attention({});
      expect(flat(all.goals)).toEqual(expected(all.shift, true));
    });
  });
});
