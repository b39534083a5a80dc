import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { dataSourceEntity, runUuid } from '#shared/domain/integrations/entity.ts';
import { applyValue, runSync } from '#shared/domain/integrations/sync.ts';
import { sweepDue } from '#shared/domain/integrations/sync-sweep.ts';
import type { SyncMessage } from '#shared/domain/integrations/entity.ts';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { Api, expectError, listAll, newTenant, type TenantFixture } from '../support/api.ts';
import { eventually } from './webhooks.fixture.ts';
import { withinListLag } from '../support/list-lag.ts';
import { outboxEmails } from '../support/outbox.ts';
import { createPeriod, goal } from './goals.fixture.ts';

/** A JSON server on 127.0.0.1 whose answer per path the test sets (a status and body, or 'hang'). */
async function startJsonServer() {
  const answers = new Map<string, { status: number; body: string } | 'hang'>();
  const seen: Array<{ path: string; headers: IncomingHttpHeaders }> = [];
  const server: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    const a = answers.get(req.url ?? '');
    if (a === 'hang') return; // never answers: the sync's timeout must end it
    const { status, body } = a ?? { status: 404, body: '{}' };
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    set: (path: string, a: { status: number; body: unknown } | 'hang') =>
      answers.set(path, a === 'hang' ? a : { status: a.status, body: typeof a.body === 'string' ? a.body : JSON.stringify(a.body) }),
    seen,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const data = (tenantId: string): DataCtx => ({ tenantId, db: baseDb() });
/** Deps of a direct runSync whose budget always grants (the worker's is the API's limiter). */
const granted = { budget: async () => ({ granted: true as const }), later: async () => {} };

describe('data-source sync', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  let owner: { uuid: string; api: Api; record: any };
  let bystander: { uuid: string; api: Api };
  let json: Awaited<ReturnType<typeof startJsonServer>>;
  /** Another origin: the same host, another port. */
  let json2: Awaited<ReturnType<typeof startJsonServer>>;
  let period: { uuid: string };

  beforeAll(async () => {
    [json, json2] = await Promise.all([startJsonServer(), startJsonServer()]);
    [t, other] = await Promise.all([newTenant(), newTenant()]);
    [owner, bystander] = await Promise.all([t.user(), t.user()]);
    period = await createPeriod(t.admin, 'Q1', '2025-01-01', '2025-03-31');
  });
  afterAll(() => Promise.all([json.stop(), json2.stop()]));

  /** A key result (reach 0 -> 200) owned by `owner` under a rollup objective. */
  async function keyResultUnderParent() {
    const parent = await goal(owner.api, 'objectives', { title: 'Grow', time_period_uuid: period.uuid });
    expect((await owner.api.put(`/rest/v2/objectives/${parent.uuid}`, { progress_mode: 'rollup' })).status).toBe(200);
    const kr = await goal(owner.api, 'key_results', {
      title: 'Revenue',
      time_period_uuid: period.uuid,
      parents: [parent.uuid],
      metric: { start_value: 0, target_value: 200, metric_type: 'reach' },
    } as never);
    return { parent, kr };
  }

  async function httpSource(goalUuid: string, path: string, extra: Record<string, unknown> = {}, api = owner.api) {
    const res = await api.post('/data_sources', {
      goal_uuid: goalUuid,
      name: `source ${path}`,
      kind: 'http_json',
      config: { url: json.url(path), json_pointer: '/data/total', ...extra },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.record;
  }

  /**
   * POST /sync (202), then the attempt it made, once logged: the log entry its run names (its uuid derives from the
   * source and the run), not "the newest of one more than before", which a log list read a moment after the last
   * attempt (lists lag up to 2 s, contract 14) would count short and answer with that last attempt.
   */
  async function syncNow(id: string, api = owner.api) {
    const res = await api.post(`/data_sources/${id}/sync`);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.data.record).toMatchObject({ data_source_uuid: id, run: expect.any(String), state: 'queued' });
    const syncUuid = runUuid(id, res.body.data.record.run, 'sync');
    return eventually(
      async () => {
        const list = (await api.get(`/data_sources/${id}/syncs?per_page=100`)).body.data.records;
        return list.find((s: { uuid: string }) => s.uuid === syncUuid);
      },
      30_000,
      'the sync to be logged',
    );
  }

  const goalNow = async (kind: string, uuid: string) => (await owner.api.get(`/rest/v2/${kind}/${uuid}`)).body.data.record;

  it('syncs a value as a check-in from the source: key result, rollup parent and history move; the same value writes nothing; a change writes again', async () => {
    const { parent, kr } = await keyResultUnderParent();
    json.set('/revenue', { status: 200, body: { data: { total: 50 } } });
    const src = await httpSource(kr.uuid, '/revenue', { headers: { Authorization: 'Bearer s3cret' } });
    expect(src).toMatchObject({ kind: 'http_json', status: 'active', last_synced_at: null, last_value: null, last_error: null });
    // header values are write-only: the record names them only
    expect(src.config).toEqual({
      url: json.url('/revenue'),
      json_pointer: '/data/total',
      every_minutes: 60,
      header_names: ['Authorization'],
    });
    expect(JSON.stringify(src)).not.toContain('s3cret');

    const first = await syncNow(src.uuid);
    expect(first).toMatchObject({ trigger: 'manual', status: 'succeeded', value: 50, error: null, checkin_uuid: expect.any(String) });
    // the sealed header went out with the fetch
    expect(json.seen.filter((s) => s.path === '/revenue').at(-1)!.headers.authorization).toBe('Bearer s3cret');
    const checkin = (await owner.api.get(`/rest/v2/checkins/${first.checkin_uuid}`)).body.data.record;
    expect(checkin).toMatchObject({ value: 50, source: 'data_source', data_source_uuid: src.uuid, creator_uuid: owner.uuid, progress: 25 });
    expect(await goalNow('key_results', kr.uuid)).toMatchObject({ current_value: 50, current_progress: 25 });
    expect((await goalNow('objectives', parent.uuid)).current_progress).toBe(25);
    await eventually(async () => {
      const h = await listAll(owner.api, `/rest/v2/key_results/${kr.uuid}/history`);
      return h.some((p) => p.value === 50 && p.cause === 'checkin') ? true : undefined;
    });
    const shown = (await owner.api.get(`/data_sources/${src.uuid}`)).body.data.record;
    expect(shown).toMatchObject({ status: 'active', last_value: 50, last_error: null, last_synced_at: first.at });

    const same = await syncNow(src.uuid);
    expect(same).toMatchObject({ status: 'unchanged', value: 50, checkin_uuid: null });
    // lists reflect the writes within 2 s (contract 14)
    await withinListLag(async () =>
      expect((await listAll(owner.api, `/rest/v2/checkins?q[goal_uuid_eq]=${kr.uuid}`)).map((c) => c.uuid)).toEqual([first.checkin_uuid]),
    );

    json.set('/revenue', { status: 200, body: { data: { total: 150 } } });
    const changed = await syncNow(src.uuid);
    expect(changed).toMatchObject({ status: 'succeeded', value: 150 });
    expect(await goalNow('key_results', kr.uuid)).toMatchObject({ current_value: 150, current_progress: 75 });
    expect((await goalNow('objectives', parent.uuid)).current_progress).toBe(75);
    // newest first
    await withinListLag(async () => {
      const log = (await owner.api.get(`/data_sources/${src.uuid}/syncs`)).body.data.records;
      expect(log.map((s: any) => s.status)).toEqual(['succeeded', 'unchanged', 'succeeded']);
    });
  });

  it('logs every kind of failure as a failed sync and keeps going', async () => {
    const { kr } = await keyResultUnderParent();
    const cases: Array<[string, { status: number; body: unknown } | 'hang', RegExp]> = [
      ['/slow', 'hang', /no answer within/],
      ['/down', { status: 503, body: { oops: true } }, /HTTP 503/],
      ['/missing', { status: 200, body: { data: {} } }, /nothing at json_pointer \/data\/total/],
      ['/text', { status: 200, body: { data: { total: 'lots' } } }, /not a number/],
      ['/notjson', { status: 200, body: 'hello' }, /not JSON/],
      ['/big', { status: 200, body: { data: { total: 1, pad: 'x'.repeat(1024 * 1024) } } }, /larger than 1048576 bytes/],
    ];
    for (const [path, answer, error] of cases) {
      json.set(path, answer);
      const src = await httpSource(kr.uuid, path);
      const sync = await syncNow(src.uuid);
      expect(sync, path).toMatchObject({ status: 'failed', value: null, checkin_uuid: null, error: expect.stringMatching(error) });
      expect((await owner.api.get(`/data_sources/${src.uuid}`)).body.data.record).toMatchObject({
        status: 'active',
        last_error: sync.error,
      });
    }
    expect((await goalNow('key_results', kr.uuid)).current_value).toBeNull();
  });

  it('turns failing after 10 failures in a row, tells the creator in-app and by e-mail, and recovers on a success', async () => {
    const { kr } = await keyResultUnderParent();
    json.set('/flaky', { status: 500, body: {} });
    const src = await httpSource(kr.uuid, '/flaky');
    for (let i = 1; i <= 9; i++) expect((await syncNow(src.uuid)).status).toBe('failed');
    expect((await owner.api.get(`/data_sources/${src.uuid}`)).body.data.record.status).toBe('active');
    await syncNow(src.uuid);
    expect((await owner.api.get(`/data_sources/${src.uuid}`)).body.data.record.status).toBe('failing');
    // the notice is written with the attempt that turned it failing; the notifications list reflects it within 2 s
    const note = await withinListLag(async () => {
      const found = (await listAll(owner.api, '/notifications')).find((n) => n.subject_uuid === src.uuid);
      expect(found).toMatchObject({ kind: 'data_source.failing', subject_type: 'data_source', recipient_uuid: owner.uuid });
      return found!;
    });
    const mail = await eventually(() => outboxEmails().find((m) => m.text.includes(`Data source "${src.name}"`)));
    expect(mail).toMatchObject({ to: [owner.record.email], subject: 'A data source stopped syncing' });
    // the e-mail marker is set once it went out
    await eventually(async () =>
      (await listAll(owner.api, '/notifications')).find((n) => n.uuid === note.uuid)?.email_sent_at ? true : undefined,
    );

    json.set('/flaky', { status: 200, body: { data: { total: 20 } } });
    expect(await syncNow(src.uuid)).toMatchObject({ status: 'succeeded', value: 20 });
    expect((await owner.api.get(`/data_sources/${src.uuid}`)).body.data.record).toMatchObject({
      status: 'active',
      last_error: null,
      last_value: 20,
    });
  });

  it('lets the goal editors pause, change and delete a source; others are refused, another tenant gets 404', async () => {
    const { kr } = await keyResultUnderParent();
    json.set('/v', { status: 200, body: { data: { total: 7 } } });
    const src = await httpSource(kr.uuid, '/v');
    const paused = await owner.api.put(`/data_sources/${src.uuid}`, { status: 'paused', name: 'renamed', config: { every_minutes: 30 } });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body.data.record).toMatchObject({
      status: 'paused',
      name: 'renamed',
      config: { every_minutes: 30, json_pointer: '/data/total' },
    });
    expectError(await owner.api.put(`/data_sources/${src.uuid}`, { config: { every_minutes: 5 } }), 422, 'validation_failed');
    expectError(await owner.api.put(`/data_sources/${src.uuid}`, { status: 'failing' }), 422, 'validation_failed'); // the service's to set
    expectError(await bystander.api.put(`/data_sources/${src.uuid}`, { name: 'mine' }), 403, 'forbidden');
    expectError(await bystander.api.post(`/data_sources/${src.uuid}/sync`), 403, 'forbidden');
    for (const res of [
      await other.admin.get(`/data_sources/${src.uuid}`),
      await other.admin.get(`/data_sources/${src.uuid}/syncs`),
      await other.admin.post(`/data_sources/${src.uuid}/sync`),
      await other.admin.put(`/data_sources/${src.uuid}`, { name: 'x' }),
      await other.admin.delete(`/data_sources/${src.uuid}`),
    ])
      expectError(res, 404, 'not_found');
    // a paused source still syncs by hand
    expect(await syncNow(src.uuid)).toMatchObject({ status: 'succeeded', value: 7 });
    const deleted = await owner.api.delete(`/data_sources/${src.uuid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.uuid).toBe(src.uuid);
    expectError(await owner.api.get(`/data_sources/${src.uuid}`), 404, 'not_found');
    expect((await goalNow('key_results', kr.uuid)).data_sources_count).toBe(0);
  });

  it('refuses unsafe or malformed http_json configs without connecting anywhere', async () => {
    const { kr } = await keyResultUnderParent();
    const bad = async (config: Record<string, unknown>, field: string) => {
      const res = await owner.api.post('/data_sources', { goal_uuid: kr.uuid, name: 'bad', kind: 'http_json', config });
      const e = expectError(res, 422, 'validation_failed');
      expect(e.details.map((d) => d.field)).toContain(field);
    };
    await bad({ url: 'https://10.1.2.3/x', json_pointer: '/a' }, 'config.url');
    await bad({ url: 'https://[::1]/x', json_pointer: '/a' }, 'config.url');
    await bad({ url: 'http://192.168.0.10/x', json_pointer: '/a' }, 'config.url');
    await bad({ url: json.url('/v'), json_pointer: 'a/b' }, 'config.json_pointer');
    await bad({ url: json.url('/v'), json_pointer: '/a', every_minutes: 14 }, 'config.every_minutes');
    await bad({ url: json.url('/v'), json_pointer: '/a', every_minutes: 1441 }, 'config.every_minutes');
    await bad({ url: json.url('/v'), json_pointer: '/a', surprise: 1 }, 'config.surprise');
    await bad({ url: json.url('/v'), json_pointer: '/a', headers: { Host: 'evil' } }, 'config.headers.Host');
  });

  it('checks the address again at fetch time, after DNS: a host that now resolves to a private address is refused without a connection', async () => {
    const { kr } = await keyResultUnderParent();
    json.set('/ok', { status: 200, body: { data: { total: 1 } } });
    const src = await httpSource(kr.uuid, '/ok');
    const ctx = data(t.tenantUuid);
    // the stored URL now names a host (DNS rebinding): its lookup answers the metadata address
    const stored = (await getEntity(ctx, dataSourceEntity, src.uuid, true))!;
    await new WriteTx(ctx)
      .replace(dataSourceEntity, stored, { ...stored.record, config: { ...stored.record.config, url: 'https://rebind.example.test/v' } })
      .commit();
    let fetched = 0;
    let resolved = 0;
    const out = await runSync(
      ctx,
      { version: 1, tenant_uuid: t.tenantUuid, data_source_uuid: src.uuid, run: 'manual-rebind', trigger: 'manual' },
      {
        ...granted,
        sendEmail: async () => 'x',
        resolve: async () => (resolved++, ['169.254.169.254']),
        fetch: async () => (fetched++, { ok: true, body: '{}' }),
      },
    );
    expect(out).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/private, loopback, link-local or metadata/) });
    expect([resolved, fetched]).toEqual([1, 0]);
  });

  it("sends a source's header values only to the origin they were given with (contract 19)", async () => {
    const { kr } = await keyResultUnderParent();
    for (const [server, path] of [
      [json, '/origin-a'],
      [json, '/origin-b'],
      [json2, '/origin-a'],
      [json2, '/origin-c'],
    ] as const)
      server.set(path, { status: 200, body: { data: { total: 1 } } });
    const src = await httpSource(kr.uuid, '/origin-a', { headers: { 'X-Api-Key': 'key-one', Authorization: 'Bearer first' } });
    expect(src.config.header_names).toEqual(['Authorization', 'X-Api-Key']); // sorted, names only
    const lastSeen = (server: typeof json, path: string) => server.seen.filter((r) => r.path === path).at(-1)?.headers;
    const put = async (config: Record<string, unknown>) => {
      const res = await owner.api.put(`/data_sources/${src.uuid}`, { config });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.record;
    };
    const shownNames = async () => (await owner.api.get(`/data_sources/${src.uuid}`)).body.data.record.config.header_names;

    await syncNow(src.uuid);
    expect(lastSeen(json, '/origin-a')).toMatchObject({ authorization: 'Bearer first', 'x-api-key': 'key-one' });

    // the same origin, another path: the values stay and go there
    expect((await put({ url: json.url('/origin-b') })).config).toEqual({
      url: json.url('/origin-b'),
      json_pointer: '/data/total',
      every_minutes: 60,
      header_names: ['Authorization', 'X-Api-Key'],
    });
    await syncNow(src.uuid);
    expect(lastSeen(json, '/origin-b')).toMatchObject({ authorization: 'Bearer first', 'x-api-key': 'key-one' });

    // another port is another origin: a PUT moving the URL there without headers drops them
    expect((await put({ url: json2.url('/origin-a') })).config.header_names).toEqual([]);
    expect(await shownNames()).toEqual([]);
    await syncNow(src.uuid);
    const second = lastSeen(json2, '/origin-a');
    expect(second).toBeDefined(); // it was fetched, without the values
    expect([second!.authorization, second!['x-api-key']]).toEqual([undefined, undefined]);
    expect(JSON.stringify(json2.seen)).not.toMatch(/Bearer first|key-one/);

    // moved back to the first origin, the dropped values do not come back
    expect((await put({ url: json.url('/origin-b') })).config.header_names).toEqual([]);
    await syncNow(src.uuid);
    expect(lastSeen(json, '/origin-b')!.authorization).toBeUndefined();

    // new headers with a new origin: the new values go there
    const rebound = await put({ url: json2.url('/origin-c'), headers: { Authorization: 'Bearer second', 'X-Api-Key': 'key-two' } });
    expect(rebound.config.header_names).toEqual(['Authorization', 'X-Api-Key']);
    expect(JSON.stringify(rebound)).not.toMatch(/Bearer second|key-two/);
    await syncNow(src.uuid);
    expect(lastSeen(json2, '/origin-c')).toMatchObject({ authorization: 'Bearer second', 'x-api-key': 'key-two' });
    expect(await shownNames()).toEqual(['Authorization', 'X-Api-Key']);
    // header_names is the service's to set
    const e = expectError(await owner.api.put(`/data_sources/${src.uuid}`, { config: { header_names: [] } }), 422, 'validation_failed');
    expect(e.details).toEqual([expect.objectContaining({ field: 'config.header_names', code: 'read_only' })]);
  });

  it('checks the origin again at the fetch: values bound to another origin, or to none (an old record), are not sent and nothing is fetched', async () => {
    const { kr } = await keyResultUnderParent();
    json.set('/bound', { status: 200, body: { data: { total: 3 } } });
    const src = await httpSource(kr.uuid, '/bound', { headers: { Authorization: 'Bearer bound' } });
    const ctx = data(t.tenantUuid);
    const first = new URL(json.url('/')).origin;
    const other = new URL(json2.url('/')).origin;
    const stored = (await getEntity(ctx, dataSourceEntity, src.uuid, true))!;
    expect(stored.record.headers_origin).toBe(first);
    // a record whose URL moved without the PUT's rule (a direct write): the fetch itself refuses to send the values
    await new WriteTx(ctx)
      .replace(dataSourceEntity, stored, { ...stored.record, config: { ...stored.record.config, url: json2.url('/stolen') } })
      .commit();
    const run = (name: string): SyncMessage => ({
      version: 1,
      tenant_uuid: t.tenantUuid,
      data_source_uuid: src.uuid,
      run: name,
      trigger: 'manual',
    });
    const deps = { ...granted, sendEmail: async () => 'x' };
    expect(await runSync(ctx, run('manual-moved'), deps)).toEqual({
      data_source_uuid: src.uuid,
      run: 'manual-moved',
      outcome: 'failed',
      reason: `its header values were given for ${first} and are not sent to ${other}: send config.headers again`,
    });
    // an old record: values stored before they were bound to an origin are sent nowhere, not even to its own URL
    const moved = (await getEntity(ctx, dataSourceEntity, src.uuid, true))!;
    const { headers_origin: _, ...unbound } = moved.record;
    await new WriteTx(ctx)
      .replace(dataSourceEntity, moved, { ...unbound, config: { ...unbound.config, url: json.url('/bound') } })
      .commit();
    expect(await runSync(ctx, run('manual-old'), deps)).toMatchObject({
      outcome: 'failed',
      reason: 'its header values were stored before they were bound to an origin and are not sent: send config.headers again',
    });
    expect(json2.seen.filter((r) => r.path === '/stolen')).toEqual([]);
    expect(json.seen.filter((r) => r.path === '/bound')).toEqual([]);
    await withinListLag(async () => {
      const log = (await owner.api.get(`/data_sources/${src.uuid}/syncs`)).body.data.records;
      expect(log.map((l: any) => l.status)).toEqual(['failed', 'failed']);
    });
  });

  it("charges each sync one unit of its tenant's budget, as a request of the source's creator (contract 19)", async () => {
    const lim = await newTenant();
    // One token per 100 s: nothing refills during the test. Users get the tenant's whole burst, so the tenant's bucket binds.
    await runAdmin([
      'set-limits',
      '--tenant',
      lim.tenantUuid,
      '--rps',
      '0.01',
      '--burst',
      '10',
      '--user-rps',
      '0.01',
      '--user-burst',
      '10',
    ]);
    const reader = await lim.user(); // tenant: 1
    const tp = await createPeriod(lim.admin, 'Q1', '2025-01-01', '2025-03-31'); // 2
    const g = await goal(lim.admin, 'objectives', { title: 'Metered', time_period_uuid: tp.uuid }); // 3
    json.set('/charged', { status: 200, body: { data: { total: 5 } } });
    const created = await lim.admin.post('/data_sources', {
      goal_uuid: g.uuid,
      name: 'metered',
      kind: 'http_json',
      config: { url: json.url('/charged'), json_pointer: '/data/total' },
    }); // 4
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await lim.admin.post(`/data_sources/${created.body.data.record.uuid}/sync`)).status).toBe(202); // 5
    // the fetch comes after the sync's charge (6)
    await eventually(() => (json.seen.some((r) => r.path === '/charged') ? true : undefined), 30_000, 'the sync to fetch');
    // 10 - 6 = 4 left: the reader gets exactly those
    for (let i = 0; i < 4; i++) expect((await reader.api.get('/rest/v2/labels')).status).toBe(200);
    const refused = await reader.api.get('/rest/v2/labels');
    expectError(refused, 429, 'rate_limited');
    expect(refused.headers.get('ratelimit')).toMatch(/"tenant";r=0/);
  });

  it('defers a run its budget refuses: nothing fetched, logged or counted as a failure; a manual run is sent again, a scheduled one stays due', async () => {
    const { kr } = await keyResultUnderParent();
    json.set('/deferred', { status: 200, body: { data: { total: 9 } } });
    const src = await httpSource(kr.uuid, '/deferred');
    const ctx = data(t.tenantUuid);
    const charged: string[] = [];
    const later: Array<[SyncMessage, number]> = [];
    const refusing = {
      sendEmail: async () => 'x',
      budget: async (tenantId: string, userId: string) => (
        charged.push(`${tenantId}/${userId}`), { granted: false as const, retryAfterSeconds: 7.2 }
      ),
      later: async (msg: SyncMessage, delay: number) => void later.push([msg, delay]),
    };
    const manual: SyncMessage = {
      version: 1,
      tenant_uuid: t.tenantUuid,
      data_source_uuid: src.uuid,
      run: 'manual-deferred',
      trigger: 'manual',
    };
    expect(await runSync(ctx, manual, refusing)).toMatchObject({ outcome: 'deferred', reason: expect.stringMatching(/rate limit.*8 s/) });
    expect(charged).toEqual([`${t.tenantUuid}/${owner.uuid}`]); // the creator's request
    expect(later).toEqual([[manual, 8]]);

    const source = (await getEntity(ctx, dataSourceEntity, src.uuid, true))!.record;
    const scheduled: SyncMessage = { ...manual, run: source.next_run_at!, trigger: 'schedule' };
    expect(await runSync(ctx, scheduled, refusing)).toMatchObject({ outcome: 'deferred', reason: expect.stringMatching(/next sweep/) });
    expect(later).toHaveLength(1); // the sweep names it again: it is still due
    const swept: SyncMessage[] = [];
    await sweepDue(baseDb(), { send: async (_q, body) => (swept.push(body as SyncMessage), 'x') }, '9999-12-31T00:00:00.000Z');
    expect(swept.filter((m) => m.data_source_uuid === src.uuid)).toEqual([scheduled]);

    // nothing was fetched, logged or counted against the source
    expect(json.seen.filter((r) => r.path === '/deferred')).toEqual([]);
    expect((await owner.api.get(`/data_sources/${src.uuid}/syncs`)).body.data.records).toEqual([]);
    expect((await getEntity(ctx, dataSourceEntity, src.uuid, true))!.record).toMatchObject({
      status: 'active',
      failures: 0,
      last_error: null,
      next_run_at: source.next_run_at,
    });
    // once the budget grants, the run that came back runs once
    expect(await runSync(ctx, later[0]![0], { ...refusing, ...granted })).toMatchObject({ outcome: 'succeeded' });
    expect(await runSync(ctx, later[0]![0], { ...refusing })).toMatchObject({ outcome: 'skipped', reason: 'already logged' });
    expect(charged).toHaveLength(2); // a run already logged costs nothing
  });

  it('writes at most one check-in for a run whose worker died after its check-in', async () => {
    const { kr } = await keyResultUnderParent();
    json.set('/once', { status: 200, body: { data: { total: 80 } } });
    const src = await httpSource(kr.uuid, '/once');
    const ctx = data(t.tenantUuid);
    const source = (await getEntity(ctx, dataSourceEntity, src.uuid, true))!.record;
    const run = 'manual-killed';
    // the first delivery wrote the check-in and died before logging the run
    const firstTry = await applyValue(ctx, source, 80, runUuid(src.uuid, run, 'checkin'));
    expect(firstTry.status).toBe('succeeded');
    const msg = { version: 1 as const, tenant_uuid: t.tenantUuid, data_source_uuid: src.uuid, run, trigger: 'manual' as const };
    const deps = { ...granted, sendEmail: async () => 'x' };
    expect(await runSync(ctx, msg, deps)).toMatchObject({ outcome: 'succeeded' });
    expect(await runSync(ctx, msg, deps)).toMatchObject({ outcome: 'skipped', reason: 'already logged' });
    // lists reflect the writes within 2 s (contract 14)
    await withinListLag(async () => {
      const checkins = await listAll(owner.api, `/rest/v2/checkins?q[goal_uuid_eq]=${kr.uuid}`);
      expect(checkins.map((c) => c.uuid)).toEqual([firstTry.checkin_uuid]);
    });
    await withinListLag(async () => {
      const log = (await owner.api.get(`/data_sources/${src.uuid}/syncs`)).body.data.records;
      expect(log).toEqual([expect.objectContaining({ status: 'succeeded', checkin_uuid: firstTry.checkin_uuid })]);
    });
  });

  describe('a source created by a service account (its creator kind recorded)', () => {
    /** A token of the account from POST /oauth/token (client credentials in the form), narrowed to `scope` when given. */
    async function serviceToken(a: { client_id: string; client_secret: string }, scope?: string): Promise<Api> {
      const form = {
        grant_type: 'client_credentials',
        client_id: a.client_id,
        client_secret: a.client_secret,
        ...(scope ? { scope } : {}),
      };
      const res = await new Api(undefined).request('POST', '/oauth/token', new URLSearchParams(form).toString(), {
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return new Api(res.body.access_token);
    }
    const pushTo = (src: { uuid: string; push_secret: string }, value: number) =>
      new Api(src.push_secret).request('POST', `/data_sources/${src.uuid}/values`, { value });
    const account = async (scopes: string[]) => {
      const res = await t.admin.post('/service_accounts', { name: `etl ${scopes.join(' ')}`, scopes });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.data.record as { uuid: string; client_id: string; client_secret: string };
    };
    const setAccount = async (uuid: string, body: Record<string, unknown>) =>
      expect((await t.admin.put(`/service_accounts/${uuid}`, body)).status).toBe(200);

    it('pushes and syncs as the account; refused as a creator who left once it loses goals:write, is disabled or deleted', async () => {
      const { kr } = await keyResultUnderParent();
      const sa = await account(['data_sources', 'goals:read', 'goals:write']);
      const api = await serviceToken(sa);
      const created = await api.post('/data_sources', { goal_uuid: kr.uuid, name: 'etl push', kind: 'push' });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const push = created.body.data.record;
      expect(push.creator_uuid).toBe(sa.uuid);
      json.set('/sa', { status: 200, body: { data: { total: 30 } } });
      const http = await httpSource(kr.uuid, '/sa', {}, api);
      expect(http.creator_uuid).toBe(sa.uuid);

      // the push and a sync write check-ins attributed to the account
      const pushed = await pushTo(push, 20);
      expect(pushed.status, JSON.stringify(pushed.body)).toBe(201);
      expect(pushed.body.data.record).toMatchObject({
        value: 20,
        source: 'data_source',
        data_source_uuid: push.uuid,
        creator_uuid: sa.uuid,
      });
      const synced = await syncNow(http.uuid, api);
      expect(synced).toMatchObject({ trigger: 'manual', status: 'succeeded', value: 30, error: null });
      expect((await owner.api.get(`/rest/v2/checkins/${synced.checkin_uuid}`)).body.data.record).toMatchObject({
        value: 30,
        data_source_uuid: http.uuid,
        creator_uuid: sa.uuid,
      });
      expect(await goalNow('key_results', kr.uuid)).toMatchObject({ current_value: 30 });

      // a token narrowed to data_sources cannot make itself a way to write goals
      const narrowed = await serviceToken(sa, 'data_sources');
      for (const kind of ['push', 'http_json']) {
        const body = {
          goal_uuid: kr.uuid,
          name: 'narrow',
          kind,
          ...(kind === 'http_json' ? { config: { url: json.url('/sa'), json_pointer: '/a' } } : {}),
        };
        const res = await narrowed.post('/data_sources', body);
        expectError(res, 403, 'insufficient_scope');
        expect(res.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="goals:write"');
      }

      const refusedAs = async (message: string, value: number) => {
        const res = await pushTo(push, value);
        expect(expectError(res, 401, 'unauthorized').message).toBe(message);
        json.set('/sa', { status: 200, body: { data: { total: value } } });
        expect(await syncNow(http.uuid, owner.api)).toMatchObject({ status: 'failed', value: null, checkin_uuid: null, error: message });
      };
      // the account acts with its scopes of now: without goals:write it writes nothing, with it again it does
      await setAccount(sa.uuid, { scopes: ['data_sources', 'goals:read'] });
      await refusedAs("The data source's creator, a service account, no longer holds the scope goals:write", 41);
      await setAccount(sa.uuid, { scopes: ['data_sources', 'goals:write'] });
      expect((await pushTo(push, 50)).status).toBe(201);
      json.set('/sa', { status: 200, body: { data: { total: 60 } } });
      expect(await syncNow(http.uuid, owner.api)).toMatchObject({ status: 'succeeded', value: 60 });

      const gone = "The data source's creator, a service account, is disabled or deleted";
      await setAccount(sa.uuid, { status: 'disabled' });
      await refusedAs(gone, 70);
      expect((await t.admin.delete(`/service_accounts/${sa.uuid}`)).status).toBe(200);
      await refusedAs(gone, 80);
      // nothing the refused runs and pushes carried reached the goal
      expect(await goalNow('key_results', kr.uuid)).toMatchObject({ current_value: 60 });
      await withinListLag(async () =>
        expect(
          (await listAll(owner.api, `/rest/v2/checkins?q[goal_uuid_eq]=${kr.uuid}`)).map((c) => c.value).sort((a, b) => a - b),
        ).toEqual([20, 30, 50, 60]),
      );
    });

    it("reads a source that records no creator kind (made before it was kept) as a user's", async () => {
      const { kr } = await keyResultUnderParent();
      const created = await owner.api.post('/data_sources', { goal_uuid: kr.uuid, name: 'old', kind: 'push' });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const src = created.body.data.record;
      const ctx = data(t.tenantUuid);
      const stored = (await getEntity(ctx, dataSourceEntity, src.uuid, true))!;
      expect(stored.record.creator_kind).toBe('user');
      const { creator_kind: _, ...old } = stored.record;
      await new WriteTx(ctx).replace(dataSourceEntity, stored, old).commit();
      const res = await pushTo(src, 12);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.data.record).toMatchObject({ value: 12, creator_uuid: owner.uuid });
    });
  });

  it('takes pushed values with the push secret only', async () => {
    const { parent, kr } = await keyResultUnderParent();
    const created = await owner.api.post('/data_sources', { goal_uuid: kr.uuid, name: 'cron', kind: 'push' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const src = created.body.data.record;
    expect(src.push_secret).toMatch(/^dsp_/);
    expect((await owner.api.get(`/data_sources/${src.uuid}`)).body.data.record.push_secret).toBeUndefined();
    const push = (token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
      new Api(token).request('POST', `/data_sources/${src.uuid}/values`, body, headers);

    const ok = await push(src.push_secret, { value: 100, note: 'from cron' }, { 'idempotency-key': 'push-1' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body.data.record).toMatchObject({
      value: 100,
      note: 'from cron',
      source: 'data_source',
      data_source_uuid: src.uuid,
      creator_uuid: owner.uuid,
    });
    const again = await push(src.push_secret, { value: 100, note: 'from cron' }, { 'idempotency-key': 'push-1' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.record.uuid).toBe(ok.body.data.record.uuid);
    expect(await goalNow('key_results', kr.uuid)).toMatchObject({ current_value: 100, current_progress: 50 });
    expect((await goalNow('objectives', parent.uuid)).current_progress).toBe(50);
    // the sync log is a list: it reflects the push within 2 s (contract 14)
    await withinListLag(async () =>
      expect((await owner.api.get(`/data_sources/${src.uuid}/syncs`)).body.data.records).toEqual([
        expect.objectContaining({ trigger: 'push', status: 'succeeded', value: 100, checkin_uuid: ok.body.data.record.uuid }),
      ]),
    );

    expectError(await push(undefined, { value: 1 }), 401, 'unauthorized');
    expectError(await push(`${src.push_secret.slice(0, -2)}xx`, { value: 1 }), 401, 'unauthorized');
    expectError(await push(await t.token(owner.uuid), { value: 1 }), 401, 'unauthorized'); // a user token is not the secret
    // another tenant's push source's secret names nothing here
    const kr2 = await goal(other.admin, 'key_results', {
      title: 'x',
      time_period_uuid: (await createPeriod(other.admin, 'Q', '2025-01-01', '2025-03-31')).uuid,
    });
    const otherSrc = (await other.admin.post('/data_sources', { goal_uuid: kr2.uuid, name: 'o', kind: 'push' })).body.data.record;
    expectError(await push(otherSrc.push_secret, { value: 1 }), 401, 'unauthorized');
    expectError(await push(src.push_secret, { value: 'x' }), 400);
    // the refused pushes wrote nothing: the goal's check-ins are the one push's (a list: within 2 s of it)
    await withinListLag(async () =>
      expect((await listAll(owner.api, `/rest/v2/checkins?q[goal_uuid_eq]=${kr.uuid}`)).map((c) => c.uuid)).toEqual([
        ok.body.data.record.uuid,
      ]),
    );
    // a push source is not fetched
    expectError(await owner.api.post(`/data_sources/${src.uuid}/sync`), 422, 'validation_failed');
  });
});
