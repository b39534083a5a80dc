import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { Api, expectError, newTenant, type TenantFixture } from '../support/api.ts';

const SOURCES = '/data_sources';

async function period(api: Api): Promise<string> {
  const res = await api.post('/rest/v2/time_periods', { name: 'Q1', start_date: '2025-01-01', end_date: '2025-03-31' });
  if (res.status !== 201) throw new Error(`time period: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.record.uuid;
}

async function goal(api: Api, kind: 'objectives' | 'initiatives', body: Record<string, unknown>): Promise<any> {
  const res = await api.post(`/rest/v2/${kind}`, body);
  if (res.status !== 201) throw new Error(`goal: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.record;
}

const goalCount = async (api: Api, uuid: string, kind = 'objectives') =>
  (await api.get(`/rest/v2/${kind}/${uuid}`)).body.data.record.data_sources_count;

describe('data sources', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  let owner: { uuid: string; api: Api };
  let bystander: { uuid: string; api: Api };
  let viewer: { uuid: string; api: Api };
  let publicGoal: any;
  let limitedGoal: any;
  let otherGoal: any;

  beforeAll(async () => {
    [t, other] = await Promise.all([newTenant(), newTenant()]);
    [owner, bystander, viewer] = await Promise.all([t.user(), t.user(), t.user({ role: 'viewer' })]);
    const [tp, otherTp] = await Promise.all([period(t.admin), period(other.admin)]);
    [publicGoal, limitedGoal, otherGoal] = await Promise.all([
      goal(owner.api, 'objectives', { title: 'Grow revenue', time_period_uuid: tp, owner_uuids: [owner.uuid] }),
      goal(owner.api, 'initiatives', { title: 'Secret launch', time_period_uuid: tp, visibility: 'limited' }),
      goal(other.admin, 'objectives', { title: 'Elsewhere', time_period_uuid: otherTp }),
    ]);
  });

  it('creates a data source on a goal the caller can update, counting it on the goal', async () => {
    expect(publicGoal.data_sources_count).toBe(0);
    const res = await owner.api.post(SOURCES, {
      goal_uuid: publicGoal.uuid,
      name: 'Pipeline',
      kind: 'salesforce',
      config: { report_id: 'R-1', filters: { region: 'EU' } },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ type: 'data_source', checks: { can_update: true }, access_source: 'owner' });
    expect(res.body.data.record).toEqual({
      uuid: expect.any(String),
      goal_uuid: publicGoal.uuid,
      name: 'Pipeline',
      kind: 'salesforce',
      config: { report_id: 'R-1', filters: { region: 'EU' } },
      creator_uuid: owner.uuid,
      // a kind the service does not sync stays a record: never synced (contract section 16)
      status: 'active',
      last_synced_at: null,
      last_value: null,
      last_error: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(await goalCount(owner.api, publicGoal.uuid)).toBe(1);
    const second = await t.admin.post(SOURCES, { goal_uuid: publicGoal.uuid, name: 'Bookings', kind: 'sheet' });
    expect(second.status).toBe(201);
    expect(second.body.data.record.config).toEqual({});
    expect(second.body.data.access_source).toBe('admin');
    expect(await goalCount(owner.api, publicGoal.uuid)).toBe(2);
  });

  it('reads the goal once: the permission checks run on the read the write is conditioned on', async () => {
    // The caller, the goal (consistent), the transaction; a member adds the query of its teams.
    const byAdmin = await t.admin.post(SOURCES, { goal_uuid: publicGoal.uuid, name: 'Trips', kind: 'sheet' });
    expect(byAdmin.status).toBe(201);
    expect(byAdmin.headers.get('x-db-round-trips')).toBe('3');
    const byOwner = await owner.api.post(SOURCES, { goal_uuid: publicGoal.uuid, name: 'Trips 2', kind: 'sheet' });
    expect(byOwner.status).toBe(201);
    // measured after merging main: 3 calls in 3 steps (main asserted 4 round trips, which the count of calls also is not)
    expect([byOwner.headers.get('x-db-round-trips'), byOwner.headers.get('x-db-calls')]).toEqual(['3', '3']);
  });

  it('counts every one of concurrent creates on one goal', async () => {
    const g = await goal(owner.api, 'objectives', { title: 'Busy goal', time_period_uuid: publicGoal.time_period_uuid });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => owner.api.post(SOURCES, { goal_uuid: g.uuid, name: `S${i}`, kind: 'sheet' })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(await goalCount(owner.api, g.uuid)).toBe(6);
  });

  it('gets a data source by its uuid or by <tenant_uuid>_<uuid>; anything else is 404', async () => {
    const created = (await owner.api.post(SOURCES, { goal_uuid: publicGoal.uuid, name: 'Get me', kind: 'sheet', config: { a: 1 } })).body
      .data.record;
    const bare = await bystander.api.get(`${SOURCES}/${created.uuid}`);
    expect(bare.status).toBe(200);
    expect(bare.body.data).toEqual({ type: 'data_source', record: created, checks: { can_update: false }, access_source: 'public' });
    const prefixed = await viewer.api.get(`${SOURCES}/${t.tenantUuid}_${created.uuid}`);
    expect(prefixed.status).toBe(200);
    expect(prefixed.body.data.record).toEqual(created);
    expect((await owner.api.get(`${SOURCES}/${t.tenantUuid.toUpperCase()}_${created.uuid.toUpperCase()}`)).body.data.record).toEqual(
      created,
    );

    expectError(await owner.api.get(`${SOURCES}/${other.tenantUuid}_${created.uuid}`), 404, 'not_found');
    expectError(await other.admin.get(`${SOURCES}/${created.uuid}`), 404, 'not_found');
    expectError(await other.admin.get(`${SOURCES}/${other.tenantUuid}_${created.uuid}`), 404, 'not_found');
    expectError(await owner.api.get(`${SOURCES}/${randomUUID()}`), 404, 'not_found');
    expectError(await owner.api.get(`${SOURCES}/not-a-uuid`), 404, 'not_found');
    expect((await new Api(undefined).get(`${SOURCES}/${created.uuid}`)).status).toBe(401);
  });

  it('needs the linked goal visible to read a data source (403 otherwise)', async () => {
    const res = await owner.api.post(SOURCES, { goal_uuid: limitedGoal.uuid, name: 'Hidden', kind: 'jira' });
    expect(res.status).toBe(201);
    expect(await goalCount(owner.api, limitedGoal.uuid, 'initiatives')).toBe(1);
    const id = res.body.data.record.uuid;
    expectError(await bystander.api.get(`${SOURCES}/${id}`), 403, 'forbidden');
    expectError(await viewer.api.get(`${SOURCES}/${t.tenantUuid}_${id}`), 403, 'forbidden');
    const byAdmin = await t.admin.get(`${SOURCES}/${id}`);
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.data).toMatchObject({ access_source: 'admin', checks: { can_update: true } });
  });

  it('refuses callers who cannot update the goal (403), with nothing written', async () => {
    const body = (goalUuid: string) => ({ goal_uuid: goalUuid, name: 'Nope', kind: 'sheet' });
    const before = await goalCount(owner.api, publicGoal.uuid);
    expectError(await viewer.api.post(SOURCES, body(publicGoal.uuid)), 403, 'forbidden');
    expectError(await bystander.api.post(SOURCES, body(publicGoal.uuid)), 403, 'forbidden');
    // a goal the caller cannot see reads as unknown: no hint that it exists
    expectError(await bystander.api.post(SOURCES, body(limitedGoal.uuid)), 422, 'validation_failed');
    expect(await goalCount(owner.api, publicGoal.uuid)).toBe(before);
    expect((await new Api(undefined).post(SOURCES, body(publicGoal.uuid))).status).toBe(401);
  });

  it('answers 422 naming goal_uuid for a goal outside the tenant, unknown or deleted', async () => {
    for (const goalUuid of [otherGoal.uuid, randomUUID()]) {
      const e = expectError(await t.admin.post(SOURCES, { goal_uuid: goalUuid, name: 'X', kind: 'sheet' }), 422, 'validation_failed');
      expect(e.details.map((d) => d.field)).toEqual(['goal_uuid']);
    }
    expect(await goalCount(other.admin, otherGoal.uuid)).toBe(0);
    const doomed = await goal(owner.api, 'objectives', { title: 'Doomed', time_period_uuid: publicGoal.time_period_uuid });
    expect((await owner.api.delete(`/rest/v2/objectives/${doomed.uuid}`)).status).toBe(200);
    const e = expectError(await owner.api.post(SOURCES, { goal_uuid: doomed.uuid, name: 'X', kind: 'sheet' }), 422, 'validation_failed');
    expect(e.details[0]).toMatchObject({ field: 'goal_uuid', code: 'discarded' });
  });

  it('validates the body: unknown fields and wrong types 400, rule breaks 422', async () => {
    const ok = { goal_uuid: publicGoal.uuid, name: 'N', kind: 'sheet' };
    const unknown = expectError(
      await owner.api.post(SOURCES, { ...ok, creator_uuid: owner.uuid, tenant_uuid: t.tenantUuid }),
      400,
      'bad_request',
    );
    expect(unknown.details.map((d) => d.field).sort()).toEqual(['creator_uuid', 'tenant_uuid']);
    expectError(await owner.api.post(SOURCES, { ...ok, config: ['a'] }), 400, 'bad_request');
    expectError(await owner.api.post(SOURCES, { ...ok, config: 'x' }), 400, 'bad_request');
    expectError(await owner.api.post(SOURCES, { goal_uuid: publicGoal.uuid, kind: 'sheet' }), 400, 'bad_request');
    expectError(await owner.api.post(SOURCES, { ...ok, name: 5 }), 400, 'bad_request');
    expectError(await owner.api.post(SOURCES, { ...ok, goal_uuid: 'nope' }), 422, 'validation_failed');
    expectError(await owner.api.post(SOURCES, { ...ok, name: '  ' }), 422, 'validation_failed');
    expectError(await owner.api.post(SOURCES, { ...ok, config: { blob: 'x'.repeat(17_000) } }), 422, 'validation_failed');
    const secret = expectError(
      await owner.api.post(SOURCES, { ...ok, config: { auth: { api_key: 'k' }, password: 'p' } }),
      422,
      'validation_failed',
    );
    expect(secret.details.map((d) => d.field).sort()).toEqual(['config.auth.api_key', 'config.password']);
  });

  it('caps a tenant at 100 data sources, exactly under concurrent creates and deletes (422 too_many)', async () => {
    const cap = await newTenant();
    const tp = await period(cap.admin);
    // one goal per concurrent create: nothing but the tenant's count makes them meet
    const goals = await Promise.all(
      Array.from({ length: 10 }, (_, i) => goal(cap.admin, 'objectives', { title: `Goal ${i}`, time_period_uuid: tp })),
    );
    const create = (i: number) => cap.admin.post(SOURCES, { goal_uuid: goals[i % goals.length].uuid, name: `S${i}`, kind: 'sheet' });
    const total = async () => (await Promise.all(goals.map((g) => goalCount(cap.admin, g.uuid)))).reduce((a, b) => a + b, 0);
    const tooMany = (res: Awaited<ReturnType<typeof create>>) => {
      const e = expectError(res, 422, 'validation_failed');
      expect(e.details).toEqual([expect.objectContaining({ code: 'too_many' })]);
    };
    const created: string[] = [];
    for (let i = 0; i < 95; i += 5) {
      for (const res of await Promise.all([0, 1, 2, 3, 4].map((j) => create(i + j)))) {
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        created.push(res.body.data.record.uuid);
      }
    }

    // ten at once at 95: exactly five pass
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => create(100 + i)));
    const passed = burst.filter((r) => r.status === 201);
    expect(passed).toHaveLength(5);
    for (const res of burst.filter((r) => r.status !== 201)) tooMany(res);
    created.push(...passed.map((r) => r.body.data.record.uuid));
    expect(await total()).toBe(100);
    tooMany(await create(150));

    // deletes and creates at once: never past 100, and the count stays exact
    const victims = created.splice(0, 4);
    const mixed = await Promise.all([
      ...victims.map((id) => cap.admin.delete(`${SOURCES}/${id}`)),
      ...Array.from({ length: 8 }, (_, i) => create(200 + i)),
    ]);
    expect(mixed.slice(0, 4).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const madeNow = mixed.slice(4).filter((r) => r.status === 201);
    for (const res of mixed.slice(4).filter((r) => r.status !== 201)) tooMany(res);
    expect(madeNow.length).toBeLessThanOrEqual(4);
    expect(await total()).toBe(96 + madeNow.length);
    // what is left under the cap, and not one more
    let added = 0;
    for (;;) {
      const res = await create(300 + added);
      if (res.status !== 201) {
        tooMany(res);
        break;
      }
      added++;
    }
    expect(96 + madeNow.length + added).toBe(100);
    expect(await total()).toBe(100);
  });
});
