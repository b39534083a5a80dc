import { beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { mutateEntity } from '#shared/command/run.ts';
import { createEntity } from '../support/seed.ts';
import { getEntity } from '#shared/db/reads.ts';
import { goalEntity, type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { NotFoundError } from '#shared/errors.ts';
import { type Api, expectError, listAll, newTenant, type TenantFixture } from '../support/api.ts';

const P = '/rest/v2/time_periods';

async function create(api: Api, body: Record<string, unknown>) {
  const res = await api.post(P, body);
  if (res.status !== 201) throw new Error(`time period create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.record as {
    uuid: string;
    name: string;
    start_date: string;
    end_date: string;
    created_at: string;
    [k: string]: unknown;
  };
}

/**
 * Goals are written by another workstream and have no endpoint yet, so the dependents rules are tested with
 * goal items written straight through the store, exactly as the goal entity indexes them (its
 * `<kind>@time_period#<period>` entries, state `discarded` when discarded). Switch to POST /rest/v2/<kind>
 * once goals land.
 */
async function seedGoal(
  t: TenantFixture,
  kind: GoalKind,
  period: { uuid: string; start_date: string; end_date: string },
  over: Partial<GoalRecord> = {},
): Promise<GoalRecord> {
  const now = new Date().toISOString();
  const goal: GoalRecord = {
    uuid: crypto.randomUUID(),
    type: kind,
    title: `${kind} goal`,
    description: null,
    start_date: period.start_date,
    end_date: period.end_date,
    goal_type: 'aspirational',
    time_period_uuid: period.uuid,
    current_metric_uuid: null,
    metric: null,
    creator_uuid: t.adminUuid,
    last_checkin_date: null,
    score: null,
    current_progress: null,
    current_value: null,
    current_status: 'not_started',
    status: null,
    source_uuid: null,
    source_type: null,
    path: null,
    searchable_content: null,
    progress_mode: 'manual',
    value_updated_at: null,
    status_updated_at: null,
    value_updated_by_uuid: null,
    status_updated_by_uuid: null,
    visibility: 'public',
    ai_rollup_enabled: false,
    data_sources_count: 0,
    discarded_at: null,
    discarded_by_uuid: null,
    short_id: null,
    short_id_uuid: null,
    archived_at: null,
    archived_by_uuid: null,
    owner_uuids: [],
    team_uuids: [],
    label_uuids: [],
    delegate_uuids: [],
    parent_links: [],
    visible_entities: [],
    checkin_due_days: null,
    partner_goals_external_id: null,
    created_at: now,
    updated_at: now,
    ...over,
  };
  return createEntity({ tenantId: t.tenantUuid, db: baseDb() }, goalEntity, goal);
}

async function discardGoal(t: TenantFixture, uuid: string) {
  const ctx = { tenantId: t.tenantUuid, db: baseDb() };
  const now = new Date().toISOString();
  await mutateEntity(
    ctx,
    goalEntity,
    uuid,
    (cur) => ({ ...cur.record, discarded_at: now, discarded_by_uuid: t.adminUuid }),
    () => new NotFoundError('Goal', uuid),
  );
  expect((await getEntity(ctx, goalEntity, uuid))?.record.discarded_at).toBe(now);
}

const q1 = { name: 'Q1 2025', start_date: '2025-01-01', end_date: '2025-03-31' };

describe('time periods', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  let member: Awaited<ReturnType<TenantFixture['user']>>;
  let viewer: Awaited<ReturnType<TenantFixture['user']>>;
  beforeAll(async () => {
    [t, other] = await Promise.all([newTenant(), newTenant()]);
    [member, viewer] = await Promise.all([t.user({ role: 'member' }), t.user({ role: 'viewer' })]);
  });

  it('creates, gets, lists, updates and deletes a time period with every record field', async () => {
    const res = await t.admin.post(P, { name: ' Q1 2025 ', start_date: '2025-01-01', end_date: '2025-03-31' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ type: 'time_period', access_source: 'admin', checks: { can_update: true, can_delete: true } });
    const rec = res.body.data.record;
    expect(rec).toEqual({
      uuid: expect.any(String),
      name: 'Q1 2025',
      start_date: '2025-01-01',
      end_date: '2025-03-31',
      creator_uuid: t.adminUuid,
      created_at: expect.any(String),
      updated_at: rec.created_at,
    });

    expect((await t.admin.get(`${P}/${rec.uuid}`)).body.data.record).toEqual(rec);
    const list = await t.admin.get(P);
    expect(list.body.data).toMatchObject({ type: 'time_period', checks: { can_create: true }, filters: {} });
    expect(list.body.data.records).toContainEqual(rec);

    const upd = await t.admin.put(`${P}/${rec.uuid}`, { name: 'First quarter', end_date: '2025-04-30' });
    expect(upd.status).toBe(200);
    expect(upd.body.data.record).toMatchObject({
      uuid: rec.uuid,
      name: 'First quarter',
      start_date: '2025-01-01',
      end_date: '2025-04-30',
      created_at: rec.created_at,
    });

    const del = await t.admin.delete(`${P}/${rec.uuid}`);
    expect(del.status).toBe(200);
    expect(del.body.data).toMatchObject({ type: 'time_period', record: { uuid: rec.uuid, name: 'First quarter' } });
    expectError(await t.admin.get(`${P}/${rec.uuid}`), 404, 'not_found');
    expectError(await t.admin.put(`${P}/${rec.uuid}`, { name: 'x' }), 404, 'not_found');
    expectError(await t.admin.delete(`${P}/${rec.uuid}`), 404, 'not_found');
  });

  it('requires start_date on or before end_date (422 naming the fields); a one-day period is fine', async () => {
    const both = expectError(
      await t.admin.post(P, { name: 'Backwards', start_date: '2025-06-30', end_date: '2025-06-01' }),
      422,
      'validation_failed',
    );
    expect(both.details.map((d) => d.field).sort()).toEqual(['end_date', 'start_date']);
    expect(both.details[0]!.code).toBe('out_of_order');
    const day = await create(t.admin, { name: 'One day', start_date: '2025-07-01', end_date: '2025-07-01' });
    const end = expectError(await t.admin.put(`${P}/${day.uuid}`, { end_date: '2025-06-30' }), 422, 'validation_failed');
    expect(end.details.map((d) => d.field)).toEqual(['end_date']);
    const start = expectError(await t.admin.put(`${P}/${day.uuid}`, { start_date: '2025-07-02' }), 422, 'validation_failed');
    expect(start.details.map((d) => d.field)).toEqual(['start_date']);
    expect((await t.admin.put(`${P}/${day.uuid}`, { start_date: '2025-07-02', end_date: '2025-07-31' })).body.data.record).toMatchObject({
      start_date: '2025-07-02',
      end_date: '2025-07-31',
    });
  });

  it('answers 400 for unknown fields, wrong types, missing fields and bad JSON; 422 for malformed dates', async () => {
    for (const field of ['tenant_uuid', 'creator_uuid', 'uuid']) {
      const e = expectError(await t.admin.post(P, { ...q1, [field]: crypto.randomUUID() }), 400, 'bad_request');
      expect(e.details.map((d) => d.field)).toContain(field);
    }
    expectError(await t.admin.post(P, { ...q1, start_date: 20250101 }), 400, 'bad_request');
    expectError(await t.admin.post(P, { ...q1, name: ['Q1'] }), 400, 'bad_request');
    expectError(await t.admin.post(P, { name: 'No dates' }), 400, 'bad_request');
    expectError(await t.admin.post(P, { time_period: q1 }), 400, 'bad_request');
    expectError(await t.admin.request('POST', P, 'nope', { 'content-type': 'application/json' }), 400, 'bad_request');
    expect(expectError(await t.admin.post(P, { ...q1, end_date: '2025-02-30' }), 422, 'validation_failed').details[0]!.field).toBe(
      'end_date',
    );
    expectError(await t.admin.post(P, { ...q1, start_date: '01/01/2025' }), 422, 'validation_failed');
    expectError(await t.admin.post(P, { ...q1, start_date: '2025-01-01T00:00:00Z' }), 422, 'validation_failed');
    expectError(await t.admin.post(P, { ...q1, name: '  ' }), 422, 'validation_failed');
    const p = await create(t.admin, q1);
    expectError(await t.admin.put(`${P}/${p.uuid}`, { end_date: null }), 400, 'bad_request');
    expectError(await t.admin.put(`${P}/${p.uuid}`, { color: 'red' }), 400, 'bad_request');
  });

  it('refuses body fields on a delete (400) and deletes nothing', async () => {
    const p = await create(t.admin, { ...q1, name: 'Not deleted' });
    expectError(await t.admin.delete(`${P}/${p.uuid}`, { force: true }), 400, 'bad_request');
    expectError(await t.admin.request('DELETE', `${P}/${p.uuid}`, 'nope', { 'content-type': 'application/json' }), 400, 'bad_request');
    expect((await t.admin.get(`${P}/${p.uuid}`)).status).toBe(200);
  });

  it('answers 400 for bad filters and list parameters; clamps per_page to 100', async () => {
    expect(expectError(await t.admin.get(`${P}?q[owner_eq]=x`), 400, 'bad_request').details[0]!.field).toBe('q[owner_eq]');
    expectError(await t.admin.get(`${P}?q[start_date_eq]=soon`), 400, 'bad_request');
    expectError(await t.admin.get(`${P}?q[start_date_cont]=2025`), 400, 'bad_request');
    expectError(await t.admin.get(`${P}?q[name_within]=x`), 400, 'bad_request');
    expectError(await t.admin.get(`${P}?per_page=ten`), 400, 'bad_request');
    expectError(await t.admin.get(`${P}?count=maybe`), 400, 'bad_request');
    const res = await t.admin.get(`${P}?per_page=1000`);
    expect(res.status).toBe(200);
    expect(res.body.data.pagy.per_page).toBe(100);
  });

  it('lets only admins write; members and viewers read (403 otherwise)', async () => {
    const p = await create(t.admin, { ...q1, name: 'Admin only' });
    for (const u of [member, viewer]) {
      const got = await u.api.get(`${P}/${p.uuid}`);
      expect(got.status).toBe(200);
      expect(got.body.data).toMatchObject({ access_source: 'public', checks: { can_update: false, can_delete: false } });
      expect((await u.api.get(P)).body.data.checks).toEqual({ can_create: false });
      expectError(await u.api.post(P, q1), 403, 'forbidden');
      expectError(await u.api.put(`${P}/${p.uuid}`, { name: 'mine' }), 403, 'forbidden');
      expectError(await u.api.delete(`${P}/${p.uuid}`), 403, 'forbidden');
    }
    expect((await t.admin.get(`${P}/${p.uuid}`)).body.data.record.name).toBe('Admin only');
  });

  it('isolates tenants: another tenant’s period is 404 for every operation and absent from lists', async () => {
    const foreign = await create(other.admin, { ...q1, name: 'Foreign period' });
    for (const api of [t.admin, member.api]) {
      expectError(await api.get(`${P}/${foreign.uuid}`), 404, 'not_found');
      expectError(await api.put(`${P}/${foreign.uuid}`, { name: 'x' }), 404, 'not_found');
      expectError(await api.delete(`${P}/${foreign.uuid}`), 404, 'not_found');
    }
    expect((await listAll(t.admin, P)).some((p) => p.uuid === foreign.uuid)).toBe(false);
    expect(await listAll(t.admin, `${P}?q[uuid_eq]=${foreign.uuid}`)).toEqual([]);
    expect((await other.admin.get(`${P}/${foreign.uuid}`)).body.data.record.name).toBe('Foreign period');
  });

  it('refuses to delete a period while non-discarded goals of any kind use it (422 has_dependents)', async () => {
    const p = await create(t.admin, { ...q1, name: 'Used' });
    const objective = await seedGoal(t, 'objective', p);
    const kr = await seedGoal(t, 'key_result', p);
    const initiative = await seedGoal(t, 'initiative', p, { archived_at: new Date().toISOString(), archived_by_uuid: t.adminUuid });
    // a goal in another period does not count
    const elsewhere = await create(t.admin, { ...q1, name: 'Elsewhere' });
    await seedGoal(t, 'objective', elsewhere);

    const e = expectError(await t.admin.delete(`${P}/${p.uuid}`), 422, 'has_dependents');
    expect(e.message).toContain('3 goal');
    await discardGoal(t, objective.uuid);
    await discardGoal(t, kr.uuid);
    // an archived goal still uses the period
    expectError(await t.admin.delete(`${P}/${p.uuid}`), 422, 'has_dependents');
    await discardGoal(t, initiative.uuid);
    expect((await t.admin.delete(`${P}/${p.uuid}`)).status).toBe(200);
    expectError(await t.admin.get(`${P}/${p.uuid}`), 404, 'not_found');
    expectError(await t.admin.delete(`${P}/${elsewhere.uuid}`), 422, 'has_dependents');
  });

  it('moves dates only while every non-discarded goal of the period stays inside them', async () => {
    const p = await create(t.admin, { name: 'H1', start_date: '2025-01-01', end_date: '2025-06-30' });
    const goal = await seedGoal(t, 'key_result', p, { start_date: '2025-02-01', end_date: '2025-05-31' });
    await seedGoal(t, 'objective', p, {
      start_date: '2025-01-01',
      end_date: '2025-01-31',
      discarded_at: new Date().toISOString(),
      discarded_by_uuid: t.adminUuid,
    });

    // widening never conflicts; narrowing up to the goal's own dates is fine (the discarded goal is ignored)
    expect((await t.admin.put(`${P}/${p.uuid}`, { start_date: '2024-12-01', end_date: '2025-12-31' })).status).toBe(200);
    expect((await t.admin.put(`${P}/${p.uuid}`, { start_date: '2025-02-01', end_date: '2025-05-31' })).status).toBe(200);

    const late = expectError(await t.admin.put(`${P}/${p.uuid}`, { end_date: '2025-05-30' }), 422, 'validation_failed');
    expect(late.details).toEqual([expect.objectContaining({ field: 'end_date', code: 'goals_out_of_range' })]);
    expect(late.message).toContain(goal.uuid);
    const both = expectError(
      await t.admin.put(`${P}/${p.uuid}`, { start_date: '2025-03-01', end_date: '2025-04-01' }),
      422,
      'validation_failed',
    );
    expect(both.details.map((d) => d.field)).toEqual(['start_date', 'end_date']);
    expect((await t.admin.get(`${P}/${p.uuid}`)).body.data.record).toMatchObject({ start_date: '2025-02-01', end_date: '2025-05-31' });

    await discardGoal(t, goal.uuid);
    expect((await t.admin.put(`${P}/${p.uuid}`, { start_date: '2025-03-01', end_date: '2025-04-01' })).status).toBe(200);
  });

  describe('filters and pagination', () => {
    let f: TenantFixture;
    let h1: any, h2: any, q3: any, fy: any;
    const q = async (query: string) => (await listAll(f.admin, `${P}?${query}`)).map((p) => p.name);
    beforeAll(async () => {
      f = await newTenant();
      h1 = await create(f.admin, { name: 'H1 2025', start_date: '2025-01-01', end_date: '2025-06-30' });
      h2 = await create(f.admin, { name: 'H2 2025', start_date: '2025-07-01', end_date: '2025-12-31' });
      q3 = await create(f.admin, { name: 'Q3 2025', start_date: '2025-07-01', end_date: '2025-09-30' });
      fy = await create(f.admin, { name: 'FY 2026', start_date: '2026-01-01', end_date: '2026-12-31' });
    });

    it('filters on every attribute and echoes the filters', async () => {
      expect(await q(`q[uuid_eq]=${q3.uuid}`)).toEqual(['Q3 2025']);
      expect(await q(`q[uuid_in]=${fy.uuid},${h1.uuid}`)).toEqual(['H1 2025', 'FY 2026']);
      expect(await q('q[name_eq]=h2 2025')).toEqual(['H2 2025']);
      expect(await q('q[name_cont]=2025')).toEqual(['H1 2025', 'H2 2025', 'Q3 2025']);
      expect(await q('q[name_start]=h')).toEqual(['H1 2025', 'H2 2025']);
      expect(await q('q[start_date_eq]=2025-07-01')).toEqual(['H2 2025', 'Q3 2025']);
      expect(await q('q[start_date_gteq]=2025-07-01&q[end_date_lt]=2026-01-01')).toEqual(['H2 2025', 'Q3 2025']);
      expect(await q('q[end_date_lteq]=2025-09-30')).toEqual(['H1 2025', 'Q3 2025']);
      expect(await q('q[end_date_gt]=2025-12-31')).toEqual(['FY 2026']);
      expect(await q('q[start_date_in][]=2025-01-01&q[start_date_in][]=2026-01-01')).toEqual(['H1 2025', 'FY 2026']);
      expect(await q(`q[created_at_gt]=${encodeURIComponent(h2.created_at)}`)).toEqual(['Q3 2025', 'FY 2026']);
      expect(await q(`q[creator_uuid_eq]=${f.adminUuid}&q[name_not_cont]=h`)).toEqual(['Q3 2025', 'FY 2026']);
      expect(await q('q[s]=start_date desc')).toEqual(['FY 2026', 'H2 2025', 'Q3 2025', 'H1 2025']);
      const res = await f.admin.get(`${P}?q[start_date_lt]=2025-07-01&q[name_cont]=H`);
      expect(res.body.data.filters).toEqual({ start_date_lt: '2025-07-01', name_cont: 'H' });
      expect(res.body.data.records.map((p: any) => p.uuid)).toEqual([h1.uuid]);
    });

    it('pages through every record exactly once with page, offset and count', async () => {
      const created = [h1.uuid, h2.uuid, q3.uuid, fy.uuid];
      for (let i = 1; i <= 9; i++)
        created.push((await create(f.admin, { name: `M${i}`, start_date: `2027-0${i}-01`, end_date: `2027-0${i}-28` })).uuid);
      const seen: string[] = [];
      for (let page = 1; ; page++) {
        const res = await f.admin.get(`${P}?page=${page}&per_page=4&count=true`);
        expect(res.body.data.pagy).toMatchObject({ page, per_page: 4, count: 13, prev: page > 1 ? page - 1 : null });
        seen.push(...res.body.data.records.map((r: any) => r.uuid));
        if (!res.body.data.pagy.next) break;
      }
      expect(seen).toEqual(created);
      const a = await f.admin.get(`${P}?offset=2&per_page=6`);
      const b = await f.admin.get(`${P}?offset=2&per_page=6&page=2`);
      expect([...a.body.data.records, ...b.body.data.records].map((r: any) => r.uuid)).toEqual(created.slice(2));
      expect(b.body.data.pagy.next).toBeNull();
      const past = await f.admin.get(`${P}?offset=99`);
      expect(past.body.data).toMatchObject({ records: [], pagy: { next: null } });
    });
  });
});
