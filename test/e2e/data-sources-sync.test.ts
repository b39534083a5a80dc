import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import type { DataCtx } from '#shared/db/model.ts';
import { getEntity } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { dataSourceEntity, runUuid } from '#shared/domain/integrations/entity.ts';
import { applyValue, runSync } from '#shared/domain/integrations/sync.ts';
import { Api, expectError, listAll, newTenant, type TenantFixture } from '../support/api.ts';
import { eventually } from './webhooks.fixture.ts';
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

describe('data-source sync', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  let owner: { uuid: string; api: Api; record: any };
  let bystander: { uuid: string; api: Api };
  let json: Awaited<ReturnType<typeof startJsonServer>>;
  let period: { uuid: string };

  beforeAll(async () => {
    json = await startJsonServer();
    [t, other] = await Promise.all([newTenant(), newTenant()]);
    [owner, bystander] = await Promise.all([t.user(), t.user()]);
    period = await createPeriod(t.admin, 'Q1', '2025-01-01', '2025-03-31');
  });
  afterAll(() => json.stop());

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

  /** POST /sync (202), then the attempt it made, once logged (the newest of one more than before). */
  async function syncNow(id: string, api = owner.api) {
    const before = (await api.get(`/data_sources/${id}/syncs`)).body.data.records.length;
    const res = await api.post(`/data_sources/${id}/sync`);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.data.record).toMatchObject({ data_source_uuid: id, state: 'queued' });
    return eventually(
      async () => {
        const list = (await api.get(`/data_sources/${id}/syncs?per_page=100`)).body.data.records;
        return list.length > before ? list[0] : undefined;
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
    expect((await listAll(owner.api, `/rest/v2/checkins?q[goal_uuid_eq]=${kr.uuid}`)).length).toBe(1);

    json.set('/revenue', { status: 200, body: { data: { total: 150 } } });
    const changed = await syncNow(src.uuid);
    expect(changed).toMatchObject({ status: 'succeeded', value: 150 });
    expect(await goalNow('key_results', kr.uuid)).toMatchObject({ current_value: 150, current_progress: 75 });
    expect((await goalNow('objectives', parent.uuid)).current_progress).toBe(75);
    // newest first
    const log = (await owner.api.get(`/data_sources/${src.uuid}/syncs`)).body.data.records;
    expect(log.map((s: any) => s.status)).toEqual(['succeeded', 'unchanged', 'succeeded']);
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
    const notes = await listAll(owner.api, '/notifications');
    const note = notes.find((n) => n.subject_uuid === src.uuid);
    expect(note).toMatchObject({ kind: 'data_source.failing', subject_type: 'data_source', recipient_uuid: owner.uuid });
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
        sendEmail: async () => 'x',
        resolve: async () => (resolved++, ['169.254.169.254']),
        fetch: async () => (fetched++, { ok: true, body: '{}' }),
      },
    );
    expect(out).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/private, loopback, link-local or metadata/) });
    expect([resolved, fetched]).toEqual([1, 0]);
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
    const deps = { sendEmail: async () => 'x' };
    expect(await runSync(ctx, msg, deps)).toMatchObject({ outcome: 'succeeded' });
    expect(await runSync(ctx, msg, deps)).toMatchObject({ outcome: 'skipped', reason: 'already logged' });
    const checkins = await listAll(owner.api, `/rest/v2/checkins?q[goal_uuid_eq]=${kr.uuid}`);
    expect(checkins.map((c) => c.uuid)).toEqual([firstTry.checkin_uuid]);
    const log = (await owner.api.get(`/data_sources/${src.uuid}/syncs`)).body.data.records;
    expect(log).toEqual([expect.objectContaining({ status: 'succeeded', checkin_uuid: firstTry.checkin_uuid })]);
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
    expect((await owner.api.get(`/data_sources/${src.uuid}/syncs`)).body.data.records).toEqual([
      expect.objectContaining({ trigger: 'push', status: 'succeeded', value: 100, checkin_uuid: ok.body.data.record.uuid }),
    ]);

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
    expect((await listAll(owner.api, `/rest/v2/checkins?q[goal_uuid_eq]=${kr.uuid}`)).length).toBe(1);
    // a push source is not fetched
    expectError(await owner.api.post(`/data_sources/${src.uuid}/sync`), 422, 'validation_failed');
  });
});
