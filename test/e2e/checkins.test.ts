import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, listAll, type TenantFixture } from '../support/api.ts';
import { goal, goalTenant, P, type GoalTenant } from './goals.fixture.ts';
import { C, CHECKIN_FIELDS, CHECKINS, checkin, goalNow, checkinApi } from './checkins.fixture.ts';
import { withinListLag } from '../support/list-lag.ts';

const NIL = '00000000-0000-4000-8000-000000000000';

describe('check-ins: create, get, update, delete; rules and permissions', () => {
  let t: TenantFixture;
  let period: GoalTenant['period'];
  let other: GoalTenant;
  let kr: any;
  beforeAll(async () => {
    let g: GoalTenant;
    [g, other] = await Promise.all([goalTenant(), goalTenant()]);
    ({ t, period } = g);
    kr = await goal(t.admin, 'key_results', {
      title: 'Revenue',
      time_period_uuid: period.uuid,
      metric: { name: 'ARR', start_value: 0, target_value: 200, metric_type: 'reach', unit: 'k$' },
    });
  });

  it('creates a check-in with every record field and its defaults, and gets it back', async () => {
    const res = await checkinApi(t.admin).create({ goal_uuid: kr.uuid });
    expect(res.status).toBe(201);
    const { type, record, checks, access_source } = res.body.data;
    expect(type).toBe('checkin');
    expect(Object.keys(record).sort()).toEqual(CHECKIN_FIELDS);
    expect(record).toMatchObject({
      goal_uuid: kr.uuid,
      metric_uuid: kr.current_metric_uuid,
      value: null,
      progress: null,
      score: null,
      status: 'not_started',
      note: null,
      creator_uuid: t.adminUuid,
      source_info: {},
      source: 'api',
      data_source_uuid: null,
      mentioned_entities: {},
      labels: [],
      checkin_date: new Date().toISOString().slice(0, 10), // today, UTC
    });
    expect(kr.current_metric_uuid).toEqual(expect.any(String));
    expect(checks).toEqual({ can_update: true, can_delete: true });
    expect(access_source).toBe('admin');
    const got = await checkinApi(t.admin).get(record.uuid);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(res.body.data);
  });

  it('takes value, status, note, score (closed), checkin_date and labels, and moves the goal', async () => {
    const g = await goal(t.admin, 'objectives', {
      title: 'Everything',
      time_period_uuid: period.uuid,
      metric: { start_value: 0, target_value: 50, metric_type: 'reach' },
    });
    const rec = await checkin(t.admin, {
      goal_uuid: g.uuid,
      value: 40,
      status: 'closed',
      score: 0.8,
      note: 'done-ish',
      checkin_date: '2025-02-01',
      labels: ['Checkin Label', 'other one', 'checkin label'],
    });
    expect(rec).toMatchObject({ value: 40, progress: 80, status: 'closed', score: 0.8, note: 'done-ish', checkin_date: '2025-02-01' });
    expect(rec.labels.map((l: any) => l.name)).toEqual(['Checkin Label', 'other one']);
    // unknown label names became labels of the tenant (listed within the lists' 2 s)
    await withinListLag(async () =>
      expect((await listAll(t.admin, '/rest/v2/labels?q[name_eq]=other one')).map((l) => l.uuid)).toEqual([rec.labels[1].uuid]),
    );
    const after = await goalNow(t.admin, g);
    expect(after).toMatchObject({
      current_value: 40,
      current_progress: 80,
      current_status: 'closed',
      score: 0.8,
      last_checkin_date: '2025-02-01',
      value_updated_by_uuid: t.adminUuid,
      status_updated_by_uuid: t.adminUuid,
      value_updated_at: rec.updated_at,
      status_updated_at: rec.updated_at,
    });
  });

  it('refuses malformed bodies (400 naming unknown fields, wrong types) and broken rules (422)', async () => {
    // Bodies the document forbids go through the untyped Api: the typed client does not compile them.
    const unknown = expectError(
      await t.admin.post(CHECKINS, { goal_uuid: kr.uuid, uuid: NIL, creator_uuid: NIL, tenant_uuid: 'x', progress: 3 }),
      400,
      'bad_request',
    );
    expect(unknown.details.map((d) => d.field).sort()).toEqual(['creator_uuid', 'progress', 'tenant_uuid', 'uuid']);
    expectError(await t.admin.post(CHECKINS, {}), 400, 'bad_request'); // goal_uuid is required
    expectError(await t.admin.post(CHECKINS, { goal_uuid: kr.uuid, value: '12' }), 400, 'bad_request');
    expectError(await t.admin.post(CHECKINS, { goal_uuid: kr.uuid, labels: 'a' }), 400, 'bad_request');
    expectError(await t.admin.request('POST', CHECKINS, '{nope', { 'content-type': 'application/json' }), 400, 'bad_request');
    expectError(await checkinApi(t.admin).create({ goal_uuid: 'not-a-uuid' }), 422, 'validation_failed');
    expectError(await t.admin.post(CHECKINS, { goal_uuid: kr.uuid, status: 'done' }), 422, 'validation_failed');
    expectError(await checkinApi(t.admin).create({ goal_uuid: kr.uuid, checkin_date: '2025-02-30' }), 422, 'validation_failed');
    expectError(await checkinApi(t.admin).create({ goal_uuid: kr.uuid, checkin_date: '01/02/2025' }), 422, 'validation_failed');
    expectError(await checkinApi(t.admin).create({ goal_uuid: kr.uuid, labels: ['  '] }), 422, 'validation_failed');
    // score only with status closed
    const score = expectError(
      await checkinApi(t.admin).create({ goal_uuid: kr.uuid, status: 'on_track', score: 0.5 }),
      422,
      'validation_failed',
    );
    expect(score.details[0]!.field).toBe('score');
    expectError(await checkinApi(t.admin).create({ goal_uuid: kr.uuid, score: 0.5 }), 422, 'validation_failed'); // default status not_started
    // goal_uuid is a reference in the body: a goal that is not in the tenant (unknown, or another tenant's) is 422 (contract 1)
    const nil = expectError(await checkinApi(t.admin).create({ goal_uuid: NIL }), 422, 'validation_failed');
    expect(nil.details).toEqual([{ field: 'goal_uuid', code: 'not_found', message: expect.stringContaining(NIL) }]);
    const foreign = await goal(other.t.admin, 'objectives', { title: 'Theirs', time_period_uuid: other.period.uuid });
    const theirs = expectError(await checkinApi(t.admin).create({ goal_uuid: foreign.uuid }), 422, 'validation_failed');
    expect(theirs.details).toEqual([{ field: 'goal_uuid', code: 'not_found', message: expect.stringContaining(foreign.uuid) }]);
    // nothing was written by the refusals
    expect(await listAll(t.admin, `${CHECKINS}?q[goal_uuid_eq]=${foreign.uuid}`)).toEqual([]);
    expect(await listAll(other.t.admin, `${CHECKINS}?q[goal_uuid_eq]=${foreign.uuid}`)).toEqual([]);
  });

  it('updates value, status, note, score and labels; answers the flat record', async () => {
    const g = await goal(t.admin, 'initiatives', {
      title: 'Update me',
      time_period_uuid: period.uuid,
      metric: { start_value: 0, target_value: 10, metric_type: 'reach' },
    });
    const rec = await checkin(t.admin, { goal_uuid: g.uuid, value: 2, labels: ['first'] });
    expect(rec.progress).toBe(20);
    const res = await checkinApi(t.admin).update(rec.uuid, {
      value: 7,
      status: 'closed',
      score: 1,
      note: 'closing',
      labels: ['second', 'third'],
    });
    expect(res.status).toBe(200);
    expect('data' in res.body).toBe(false); // flat, not wrapped
    expect(Object.keys(res.body).sort()).toEqual(CHECKIN_FIELDS);
    expect(res.body).toMatchObject({
      uuid: rec.uuid,
      value: 7,
      progress: 70,
      status: 'closed',
      score: 1,
      note: 'closing',
      checkin_date: rec.checkin_date,
      created_at: rec.created_at,
      creator_uuid: t.adminUuid,
    });
    expect(res.body.labels.map((l: any) => l.name)).toEqual(['second', 'third']);
    expect(res.body.updated_at > rec.updated_at).toBe(true);
    expect((await checkinApi(t.admin).get(rec.uuid)).body.data.record).toEqual(res.body);
    expect(await goalNow(t.admin, g)).toMatchObject({ current_value: 7, current_progress: 70, current_status: 'closed', score: 1 });

    // score stays with closed; a status other than closed clears it; score with a non-closed status is refused
    expect((await checkinApi(t.admin).update(rec.uuid, { note: null })).body).toMatchObject({
      score: 1,
      status: 'closed',
      note: null,
      value: 7,
    });
    expectError(await checkinApi(t.admin).update(rec.uuid, { status: 'at_risk', score: 0.3 }), 422, 'validation_failed');
    expect((await checkinApi(t.admin).update(rec.uuid, { status: 'at_risk' })).body).toMatchObject({ score: null, status: 'at_risk' });
    expectError(await checkinApi(t.admin).update(rec.uuid, { score: 0.3 }), 422, 'validation_failed');
    expect((await checkinApi(t.admin).update(rec.uuid, { value: null })).body).toMatchObject({ value: null, progress: null });
    expect(await goalNow(t.admin, g)).toMatchObject({
      current_value: null,
      current_progress: null,
      current_status: 'at_risk',
      score: null,
    });

    // body rules
    const unknown = expectError(await t.admin.put(C(rec.uuid), { checkin_date: '2025-01-01', goal_uuid: g.uuid }), 400, 'bad_request');
    expect(unknown.details.map((d) => d.field).sort()).toEqual(['checkin_date', 'goal_uuid']);
    expectError(await t.admin.put(C(rec.uuid), { value: 'x' }), 400, 'bad_request');
    expectError(await checkinApi(t.admin).update(NIL, { value: 1 }), 404, 'not_found');
  });

  it('deletes a check-in: 200 with the flat deleted record, then 404', async () => {
    const g = await goal(t.admin, 'initiatives', { title: 'Delete me', time_period_uuid: period.uuid });
    const rec = await checkin(t.admin, { goal_uuid: g.uuid, value: 30, labels: ['del'] });
    // the delete takes no body: a field sent is refused, not ignored (contract 1)
    expect(expectError(await t.admin.delete(C(rec.uuid), { hard: true }), 400, 'bad_request').details[0]!.field).toBe('hard');
    const res = await checkinApi(t.admin).remove(rec.uuid);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(rec);
    expectError(await checkinApi(t.admin).get(rec.uuid), 404, 'not_found');
    expectError(await checkinApi(t.admin).update(rec.uuid, { value: 1 }), 404, 'not_found');
    expectError(await checkinApi(t.admin).remove(rec.uuid), 404, 'not_found');
    // the list reflects the delete within 2 s (contract 14)
    await withinListLag(async () => expect(await listAll(t.admin, `${CHECKINS}?q[checkinable_uuid_eq]=${g.uuid}`)).toEqual([]));
  });

  it('isolates tenants: another tenant’s check-in is 404 for get, update and delete, and absent from lists', async () => {
    const foreignGoal = await goal(other.t.admin, 'objectives', { title: 'Theirs', time_period_uuid: other.period.uuid });
    const foreign = await checkin(other.t.admin, { goal_uuid: foreignGoal.uuid, value: 5 });
    expectError(await checkinApi(t.admin).get(foreign.uuid), 404, 'not_found');
    expectError(await checkinApi(t.admin).update(foreign.uuid, { value: 6 }), 404, 'not_found');
    expectError(await checkinApi(t.admin).remove(foreign.uuid), 404, 'not_found');
    expect(await listAll(t.admin, `${CHECKINS}?q[uuid_eq]=${foreign.uuid}`)).toEqual([]);
    expect(await listAll(t.admin, `${CHECKINS}?q[checkinable_uuid_eq]=${foreignGoal.uuid}`)).toEqual([]);
    expect((await listAll(t.admin, CHECKINS)).some((c) => c.uuid === foreign.uuid)).toBe(false);
    expect((await checkinApi(other.t.admin).get(foreign.uuid)).body.data.record.value).toBe(5);
  });

  it('needs edit rights on the goal to write, and the goal visible to read', async () => {
    const [owner, stranger, viewer, delegate, editor, seer] = await Promise.all([
      t.user(),
      t.user(),
      t.user({ role: 'viewer' }),
      t.user(),
      t.user(),
      t.user(),
    ]);
    const pub = await goal(t.admin, 'key_results', {
      title: 'Public',
      time_period_uuid: period.uuid,
      owner_uuids: [owner.uuid, viewer.uuid],
      delegate_uuids: [delegate.uuid],
    });
    const limited = await goal(t.admin, 'key_results', {
      title: 'Limited',
      time_period_uuid: period.uuid,
      visibility: 'limited',
      owner_uuids: [owner.uuid],
      visible_entities: [
        { entity_type: 'user', entity_uuid: editor.uuid, mode: 'edit' },
        { entity_type: 'user', entity_uuid: seer.uuid, mode: 'view' },
      ],
    });

    // owners, delegates and edit-mode visible entities check in; the response says why they see it
    const byOwner = await checkinApi(owner.api).create({ goal_uuid: pub.uuid, value: 1 });
    expect(byOwner.status).toBe(201);
    expect(byOwner.body.data).toMatchObject({ access_source: 'owner', checks: { can_update: true, can_delete: true } });
    expect((await checkinApi(delegate.api).create({ goal_uuid: pub.uuid, value: 2 })).body.data.access_source).toBe('delegate');
    const byEditor = await checkinApi(editor.api).create({ goal_uuid: limited.uuid, value: 3 });
    expect(byEditor.status).toBe(201);
    expect(byEditor.body.data.access_source).toBe('visible_entity');

    // a member who cannot edit the goal: 403 on every write, reads allowed while the goal is visible
    const onPub = byOwner.body.data.record;
    expectError(await checkinApi(stranger.api).create({ goal_uuid: pub.uuid, value: 9 }), 403, 'forbidden');
    expectError(await checkinApi(stranger.api).update(onPub.uuid, { value: 9 }), 403, 'forbidden');
    expectError(await checkinApi(stranger.api).remove(onPub.uuid), 403, 'forbidden');
    const seen = await checkinApi(stranger.api).get(onPub.uuid);
    expect(seen.status).toBe(200);
    expect(seen.body.data).toMatchObject({ access_source: 'public', checks: { can_update: false, can_delete: false } });
    expect((await stranger.api.get(`${CHECKINS}?q[goal_uuid_eq]=${pub.uuid}`)).body.data.checks).toEqual({ can_create: true });

    // a viewer writes nothing, even on a goal it owns; it reads
    expectError(await checkinApi(viewer.api).create({ goal_uuid: pub.uuid, value: 9 }), 403, 'forbidden');
    expectError(await checkinApi(viewer.api).update(onPub.uuid, { value: 9 }), 403, 'forbidden');
    expectError(await checkinApi(viewer.api).remove(onPub.uuid), 403, 'forbidden');
    expect((await checkinApi(viewer.api).get(onPub.uuid)).body.data.checks).toEqual({ can_update: false, can_delete: false });
    expect((await viewer.api.get(CHECKINS)).body.data.checks).toEqual({ can_create: false });

    // view-mode visible entity reads but cannot write; a member the limited goal is not shared with gets 403
    const onLimited = byEditor.body.data.record;
    expect((await checkinApi(seer.api).get(onLimited.uuid)).status).toBe(200);
    expectError(await checkinApi(seer.api).create({ goal_uuid: limited.uuid }), 403, 'forbidden');
    expectError(await checkinApi(stranger.api).get(onLimited.uuid), 403, 'forbidden');
    // a goal the caller cannot see is named in a create body as an unknown one would be: no existence leak
    const hidden = expectError(await checkinApi(stranger.api).create({ goal_uuid: limited.uuid }), 422, 'validation_failed');
    expect(hidden.details).toEqual([{ field: 'goal_uuid', code: 'not_found', message: expect.any(String) }]);
    expectError(await checkinApi(stranger.api).update(onLimited.uuid, { value: 1 }), 403, 'forbidden');
    expectError(await checkinApi(stranger.api).remove(onLimited.uuid), 403, 'forbidden');

    // lists leave out check-ins of goals the caller cannot see (the check-ins written above are listed within the lists' 2 s)
    await withinListLag(async () => {
      const strangerSees = (await listAll(stranger.api, CHECKINS)).map((c) => c.uuid);
      expect(strangerSees).toContain(onPub.uuid);
      expect(strangerSees).not.toContain(onLimited.uuid);
      expect((await listAll(seer.api, `${CHECKINS}?q[checkinable_uuid_eq]=${limited.uuid}`)).map((c) => c.uuid)).toEqual([onLimited.uuid]);
      expect((await listAll(t.admin, `${CHECKINS}?q[checkinable_uuid_eq]=${limited.uuid}`)).map((c) => c.uuid)).toEqual([onLimited.uuid]);
    });
    expect(await listAll(stranger.api, `${CHECKINS}?q[checkinable_uuid_eq]=${limited.uuid}`)).toEqual([]);

    // the owner updates and deletes a check-in someone else wrote; the goal records who wrote last
    const upd = await checkinApi(owner.api).update(onLimited.uuid, { value: 4 });
    expect(upd.status).toBe(200);
    expect(upd.body.creator_uuid).toBe(editor.uuid);
    expect(await goalNow(t.admin, limited)).toMatchObject({
      current_value: 4,
      value_updated_by_uuid: owner.uuid,
      status_updated_by_uuid: owner.uuid,
    });
    expect((await checkinApi(owner.api).remove(onLimited.uuid)).status).toBe(200);
  });

  it('a goal_uuid the caller cannot see answers exactly as an unknown one (422 not_found); a visible goal it cannot edit is 403', async () => {
    const [stranger, viewer] = await Promise.all([t.user(), t.user({ role: 'viewer' })]);
    const hidden = await goal(t.admin, 'objectives', { title: 'Hidden', time_period_uuid: period.uuid, visibility: 'limited' });
    const shown = await goal(t.admin, 'objectives', { title: 'Shown', time_period_uuid: period.uuid });
    const sameAnswer = (e: ReturnType<typeof expectError>, uuid: string) => ({
      message: e.message.replace(uuid, '<uuid>'),
      details: e.details.map((d) => ({ ...d, message: d.message.replace(uuid, '<uuid>') })),
    });
    for (const who of [stranger, viewer]) {
      const unknown = expectError(await checkinApi(who.api).create({ goal_uuid: NIL, value: 1 }), 422, 'validation_failed');
      const invisible = expectError(await checkinApi(who.api).create({ goal_uuid: hidden.uuid, value: 1 }), 422, 'validation_failed');
      expect(invisible.details[0]).toMatchObject({ field: 'goal_uuid', code: 'not_found' });
      expect(sameAnswer(invisible, hidden.uuid)).toEqual(sameAnswer(unknown, NIL));
      expectError(await checkinApi(who.api).create({ goal_uuid: shown.uuid, value: 1 }), 403, 'forbidden');
    }
    expect(await listAll(t.admin, `${CHECKINS}?q[goal_uuid_in]=${hidden.uuid},${shown.uuid}`)).toEqual([]);
  });

  it('freezes the check-ins of deleted and archived goals (422)', async () => {
    const g = await goal(t.admin, 'initiatives', { title: 'Archive me', time_period_uuid: period.uuid });
    const rec = await checkin(t.admin, { goal_uuid: g.uuid, value: 10 });
    expect((await t.admin.post(P('initiatives', g.uuid, '/archive'))).status).toBe(200);
    expectError(await checkinApi(t.admin).create({ goal_uuid: g.uuid, value: 1 }), 422, 'validation_failed');
    expectError(await checkinApi(t.admin).update(rec.uuid, { value: 1 }), 422, 'validation_failed');
    expectError(await checkinApi(t.admin).remove(rec.uuid), 422, 'validation_failed');
    expect((await checkinApi(t.admin).get(rec.uuid)).body.data.checks).toEqual({ can_update: false, can_delete: false });
    expect((await t.admin.post(P('initiatives', g.uuid, '/unarchive'))).status).toBe(200);
    expect((await checkinApi(t.admin).update(rec.uuid, { value: 11 })).status).toBe(200);
    expect((await t.admin.delete(P('initiatives', g.uuid))).status).toBe(200);
    const refused = expectError(await checkinApi(t.admin).create({ goal_uuid: g.uuid, value: 1 }), 422, 'validation_failed');
    expect(refused.details[0]!.field).toBe('goal_uuid');
    expect((await checkinApi(t.admin).get(rec.uuid)).status).toBe(200); // still readable
  });
});

describe('check-ins: filters and pagination', () => {
  let t: TenantFixture;
  let period: GoalTenant['period'];
  let obj: any;
  let kr: any;
  let init: any;
  let all: any[];
  beforeAll(async () => {
    ({ t, period } = await goalTenant());
    [obj, kr, init] = await Promise.all([
      goal(t.admin, 'objectives', { title: 'O', time_period_uuid: period.uuid }),
      goal(t.admin, 'key_results', { title: 'K', time_period_uuid: period.uuid }),
      goal(t.admin, 'initiatives', { title: 'I', time_period_uuid: period.uuid }),
    ]);
    all = [];
    // sequential, so creation order is known: 25 on the key result, 3 on the objective, 2 on the initiative
    for (let i = 0; i < 25; i++)
      all.push(
        await checkin(t.admin, {
          goal_uuid: kr.uuid,
          value: i,
          checkin_date: `2025-01-${String(i + 1).padStart(2, '0')}`,
          status: i % 2 ? 'on_track' : 'behind',
        }),
      );
    for (let i = 0; i < 3; i++)
      all.push(await checkin(t.admin, { goal_uuid: obj.uuid, value: 100 + i, checkin_date: '2025-02-15', status: 'at_risk' }));
    for (let i = 0; i < 2; i++) all.push(await checkin(t.admin, { goal_uuid: init.uuid, checkin_date: '2025-03-01' }));
    // the lists read an index: every check-in listed within 2 s of its write (contract section 14)
    await withinListLag(async () => expect(await listAll(t.admin, CHECKINS)).toHaveLength(all.length));
  });

  const ids = (rs: any[]) => rs.map((r) => r.uuid);
  const q = (filters: string) => listAll(t.admin, `${CHECKINS}?${filters}`);

  it('pages in creation order, every record exactly once, with next/prev and count', async () => {
    const first = await t.admin.get(`${CHECKINS}?per_page=10&count=true`);
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({
      type: 'checkin',
      pagy: { page: 1, per_page: 10, next: 2, prev: null, count: 30 },
      checks: { can_create: true },
      filters: {},
    });
    expect(ids(first.body.data.records)).toEqual(ids(all.slice(0, 10)));
    const last = await t.admin.get(`${CHECKINS}?page=3&per_page=10`);
    expect(last.body.data.pagy).toMatchObject({ page: 3, next: null, prev: 2 });
    expect(ids(last.body.data.records)).toEqual(ids(all.slice(20)));
    expect(ids(await listAll(t.admin, CHECKINS, 7))).toEqual(ids(all));
    // the tenant's check-in list is sharded by goal; merged back, newest first is the exact reverse
    expect(ids(await listAll(t.admin, `${CHECKINS}?q[s]=created_at%20desc`, 7))).toEqual(ids(all).reverse());
    expect((await t.admin.get(`${CHECKINS}?limit=5&offset=27`)).body.data.records).toHaveLength(3);
    expect((await t.admin.get(`${CHECKINS}?offset=30`)).body.data.records).toEqual([]);
    expect((await t.admin.get(`${CHECKINS}?per_page=500`)).body.data.pagy.per_page).toBe(100);
    expectError(await t.admin.get(`${CHECKINS}?page=-1`), 400, 'bad_request');
    expectError(await t.admin.get(`${CHECKINS}?per_page=abc`), 400, 'bad_request');
  });

  it('filters by checkinable_uuid (goal_uuid alias), checkinable_type, uuid', async () => {
    expect(ids(await q(`q[checkinable_uuid_eq]=${kr.uuid}`))).toEqual(ids(all.slice(0, 25)));
    expect(ids(await q(`q[goal_uuid_eq]=${obj.uuid}`))).toEqual(ids(all.slice(25, 28)));
    expect(ids(await q(`q[checkinable_uuid_in][]=${obj.uuid}&q[checkinable_uuid_in][]=${init.uuid}`))).toEqual(ids(all.slice(25)));
    expect(ids(await q(`q[checkinable_type_eq]=initiative`))).toEqual(ids(all.slice(28)));
    expect(ids(await q(`q[checkinable_type_in]=objective,initiative`))).toEqual(ids(all.slice(25)));
    expect(ids(await q(`q[uuid_eq]=${all[3].uuid}`))).toEqual([all[3].uuid]);
    expect(ids(await q(`q[uuid_in]=${all[5].uuid},${all[2].uuid}`))).toEqual([all[2].uuid, all[5].uuid]);
    const page = await t.admin.get(`${CHECKINS}?q[checkinable_uuid_eq]=${kr.uuid}&per_page=10&page=3`);
    expect(ids(page.body.data.records)).toEqual(ids(all.slice(20, 25)));
    expect(page.body.data.filters).toEqual({ checkinable_uuid_eq: kr.uuid });
  });

  it('filters by checkin_date, created_at, status, value, source_type; sorts', async () => {
    expect(ids(await q(`q[checkin_date_gteq]=2025-01-20&q[checkin_date_lt]=2025-02-01`))).toEqual(ids(all.slice(19, 25)));
    expect(ids(await q(`q[checkin_date_eq]=2025-02-15`))).toEqual(ids(all.slice(25, 28)));
    expect(ids(await q(`q[created_at_gt]=${encodeURIComponent(all[26].created_at)}`))).toEqual(ids(all.slice(27)));
    expect(ids(await q(`q[created_at_lteq]=${encodeURIComponent(all[1].created_at)}`))).toEqual(ids(all.slice(0, 2)));
    expect(ids(await q(`q[status_eq]=at_risk`))).toEqual(ids(all.slice(25, 28)));
    expect(ids(await q(`q[status_in]=not_started,at_risk`))).toEqual(ids(all.slice(25)));
    expect(ids(await q(`q[checkinable_uuid_eq]=${kr.uuid}&q[status_eq]=on_track&q[value_gteq]=20`))).toEqual([all[21].uuid, all[23].uuid]);
    expect(ids(await q(`q[value_gt]=100.5`))).toEqual(ids(all.slice(26, 28)));
    expect(ids(await q(`q[value_null]=1`))).toEqual(ids(all.slice(28)));
    expect(await q(`q[source_type_not_null]=1`)).toEqual([]);
    expect(await q(`q[source_type_null]=1`)).toHaveLength(30);
    expect(ids(await q(`q[checkinable_uuid_eq]=${kr.uuid}&q[s]=checkin_date desc`)).slice(0, 3)).toEqual(ids(all.slice(22, 25)).reverse());
    expect(ids(await q(`q[s]=created_at desc`))).toEqual(ids(all).reverse());
  });

  it('refuses unknown attributes, predicates and bad values (400)', async () => {
    expectError(await t.admin.get(`${CHECKINS}?q[bogus_eq]=1`), 400, 'bad_request');
    expectError(await t.admin.get(`${CHECKINS}?q[status_bogus]=1`), 400, 'bad_request');
    expectError(await t.admin.get(`${CHECKINS}?q[value_gt]=abc`), 400, 'bad_request');
    expectError(await t.admin.get(`${CHECKINS}?q[checkin_date_eq]=yesterday`), 400, 'bad_request');
    expectError(await t.admin.get(`${CHECKINS}?bogus=1`), 400, 'bad_request');
  });
});
