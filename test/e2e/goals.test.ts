import type { GoalCreateBody } from '../../clients/typescript/src/index.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, listAll, newTenant, type TenantFixture } from '../support/api.ts';
import { GOAL_LIMITS } from '#shared/domain/goals/rules.ts';
import { createPeriod, goal, goalApi, goalTenant, GOAL_FIELDS, KINDS, P, type GoalTenant } from './goals.fixture.ts';
import { withinListLag } from '../support/list-lag.ts';

describe('goals: create, get, update, archive; rules', () => {
  let g: GoalTenant;
  let t: TenantFixture;
  let period: GoalTenant['period'];
  let other: GoalTenant;
  beforeAll(async () => {
    [g, other] = await Promise.all([goalTenant(), goalTenant()]);
    ({ t, period } = g);
  });

  it('creates each kind with every record field, defaults from the period, and gets it back', async () => {
    for (const kind of KINDS) {
      const res = await goalApi(t.admin).create(kind, { title: `A ${kind}`, time_period_uuid: period.uuid });
      expect(res.status).toBe(201);
      const { type, record, checks, access_source } = res.body.data;
      expect(type).toBe(kind.slice(0, -1));
      expect(Object.keys(record).sort()).toEqual(GOAL_FIELDS);
      expect(record).toMatchObject({
        type: kind.slice(0, -1),
        title: `A ${kind}`,
        description: null,
        start_date: period.start_date,
        end_date: period.end_date,
        goal_type: 'aspirational',
        visibility: 'public',
        progress_mode: 'manual',
        current_status: 'not_started',
        status: 'not_started',
        creator_uuid: t.adminUuid,
        owner_uuids: [],
        team_uuids: [],
        labels: [],
        delegate_uuids: [],
        delegate_uuid: null,
        parent_links: [],
        visible_entities: [],
        current_metric_uuid: null,
        target: null,
        unit: null,
        metric_type: null,
        short_id: null,
        short_id_uuid: null,
        discarded_at: null,
        archived_at: null,
        ai_rollup_enabled: false,
        data_sources_count: 0,
        checkin_due_days: null,
        partner_goals_external_id: null,
        path: record.uuid,
        searchable_content: `a ${kind}`,
      });
      expect(checks).toEqual({ can_update: true, can_delete: true, can_checkin: true, can_archive: true });
      expect(access_source).toBe('admin');

      const got = await goalApi(t.admin).get(kind, record.uuid);
      expect(got.status).toBe(200);
      expect(got.body.data).toEqual(res.body.data);
      // a goal of another kind does not exist on this kind's path
      const otherKind = KINDS.find((k) => k !== kind)!;
      expectError(await goalApi(t.admin).get(otherKind, record.uuid), 404, 'not_found');
      expectError(await goalApi(t.admin).update(otherKind, record.uuid, { title: 'x' }), 404, 'not_found');
      expectError(await goalApi(t.admin).remove(otherKind, record.uuid), 404, 'not_found');
      expectError(await goalApi(t.admin).archive(otherKind, record.uuid), 404, 'not_found');
    }
    expectError(await goalApi(t.admin).get('objectives', '00000000-0000-4000-8000-000000000000'), 404, 'not_found');
  });

  it('creates with every body field: owners, teams, labels (new ones created), delegates, metric, parents, visible entities', async () => {
    const [owner, delegate, seer] = await Promise.all([t.user(), t.user(), t.user()]);
    const team = (await t.admin.post('/rest/v2/teams', { name: `Team ${Date.now()}` })).body.data.record;
    const existing = (await t.admin.post('/rest/v2/labels', { name: 'Existing label' })).body.data.record;
    const parent = await goal(t.admin, 'objectives', { title: 'Parent', time_period_uuid: period.uuid });
    const body: GoalCreateBody = {
      title: 'Grow revenue',
      description: 'By a lot',
      time_period_uuid: period.uuid,
      start_date: '2025-01-15',
      end_date: '2025-02-15',
      goal_type: 'committed',
      visibility: 'limited',
      team_uuids: [team.uuid],
      owner_uuids: [owner.uuid, owner.uuid],
      labels: ['existing LABEL', 'Brand New Label'],
      delegate_uuids: [delegate.uuid],
      checkin_due_days: 7,
      metric: { name: 'ARR', start_value: 10, target_value: 20, unit: 'M$', metric_type: 'reach' },
      parents: [parent.uuid],
      visible_entities: [{ entity_type: 'user', entity_uuid: seer.uuid, mode: 'edit' }],
    };
    const rec = await goal(t.admin, 'key_results', body);
    expect(rec).toMatchObject({
      title: 'Grow revenue',
      description: 'By a lot',
      start_date: '2025-01-15',
      end_date: '2025-02-15',
      goal_type: 'committed',
      visibility: 'limited',
      team_uuids: [team.uuid],
      owner_uuids: [owner.uuid],
      delegate_uuids: [delegate.uuid],
      delegate_uuid: delegate.uuid,
      checkin_due_days: 7,
      target: 20,
      unit: 'M$',
      metric_type: 'reach',
      parent_links: [{ parent_uuid: parent.uuid, contribution_percent: 100 }],
      visible_entities: [{ entity_type: 'user', entity_uuid: seer.uuid, mode: 'edit' }],
      path: `${parent.uuid}/${rec.uuid}`,
      searchable_content: 'grow revenue by a lot',
    });
    expect(rec.current_metric_uuid).toEqual(expect.any(String));
    expect(rec.labels[0]).toEqual({ uuid: existing.uuid, name: 'Existing label' });
    expect(rec.labels[1]).toMatchObject({ name: 'Brand New Label' });
    await withinListLag(async () => {
      const created = await listAll(t.admin, `/rest/v2/labels?q[name_eq]=${encodeURIComponent('brand new label')}`);
      expect(created.map((l) => l.uuid)).toEqual([rec.labels[1].uuid]);
    });
  });

  it('accepts the earlier variants: delegate_uuid (string) and checkin_due_days; answers with both delegate fields', async () => {
    const d = await t.user();
    const rec = await goal(t.admin, 'key_results', {
      title: 'Earlier',
      time_period_uuid: period.uuid,
      delegate_uuid: d.uuid,
      checkin_due_days: 14,
    });
    expect(rec).toMatchObject({ delegate_uuid: d.uuid, delegate_uuids: [d.uuid], checkin_due_days: 14 });
    const cleared = await goalApi(t.admin).update('key_results', rec.uuid, { delegate_uuid: null, checkin_due_days: null });
    expect(cleared.body.data.record).toMatchObject({ delegate_uuid: null, delegate_uuids: [], checkin_due_days: null });
    const both = expectError(
      await goalApi(t.admin).create('key_results', {
        title: 'x',
        time_period_uuid: period.uuid,
        delegate_uuid: d.uuid,
        delegate_uuids: [d.uuid],
      }),
      422,
      'validation_failed',
    );
    expect(both.details[0]!.field).toBe('delegate_uuid');
  });

  it('refuses unknown fields, uuid/creator_uuid/tenant_uuid, wrong types and bad JSON with 400 naming them', async () => {
    // Bodies the document forbids go through the untyped Api: the typed client does not compile them.
    const e = expectError(
      await t.admin.post(P('objectives'), {
        title: 'x',
        time_period_uuid: period.uuid,
        uuid: period.uuid,
        creator_uuid: t.adminUuid,
        tenant_uuid: t.tenantUuid,
        colour: 'red',
      }),
      400,
      'bad_request',
    );
    expect(e.details.map((d) => d.field).sort()).toEqual(['colour', 'creator_uuid', 'tenant_uuid', 'uuid']);
    expectError(await t.admin.post(P('objectives'), { title: 'x', time_period_uuid: period.uuid, short_id: 'AB' }), 400, 'bad_request'); // not a create field
    expectError(await t.admin.post(P('objectives'), { title: 42, time_period_uuid: period.uuid }), 400, 'bad_request');
    expectError(await t.admin.post(P('objectives'), { time_period_uuid: period.uuid }), 400, 'bad_request');
    expectError(await t.admin.post(P('objectives'), { title: 'x' }), 400, 'bad_request');
    expectError(
      await t.admin.post(P('objectives'), { title: 'x', time_period_uuid: period.uuid, metric: { target_value: 1, extra: 1 } }),
      400,
      'bad_request',
    );
    expectError(await t.admin.request('POST', P('objectives'), '{"title":', { 'content-type': 'application/json' }), 400, 'bad_request');
    const rec = await goal(t.admin, 'objectives', { title: 'strict', time_period_uuid: period.uuid });
    const u = expectError(await t.admin.put(P('objectives', rec.uuid), { creator_uuid: t.adminUuid }), 400, 'bad_request');
    expect(u.details[0]!.field).toBe('creator_uuid');
    expectError(await t.admin.delete(P('objectives', rec.uuid), { cascade: true }), 400, 'bad_request');
    expectError(await t.admin.post(P('objectives', rec.uuid, '/archive'), { now: true }), 400, 'bad_request');
  });

  it('rules 1-2: dates inside the time period and in order (422 naming the field)', async () => {
    const base = { title: 'Dates', time_period_uuid: period.uuid };
    const before = expectError(
      await goalApi(t.admin).create('objectives', { ...base, start_date: '2024-12-31' }),
      422,
      'validation_failed',
    );
    expect(before.details).toEqual([expect.objectContaining({ field: 'start_date', code: 'out_of_range' })]);
    const after = expectError(await goalApi(t.admin).create('objectives', { ...base, end_date: '2025-04-01' }), 422, 'validation_failed');
    expect(after.details).toEqual([expect.objectContaining({ field: 'end_date', code: 'out_of_range' })]);
    const order = expectError(
      await goalApi(t.admin).create('objectives', { ...base, start_date: '2025-03-01', end_date: '2025-02-01' }),
      422,
      'validation_failed',
    );
    expect(order.details.map((d) => [d.field, d.code])).toEqual([
      ['start_date', 'order'],
      ['end_date', 'order'],
    ]);
    // bounds are inclusive
    const edge = await goal(t.admin, 'objectives', { ...base, start_date: '2025-03-31', end_date: '2025-03-31' });
    expect(edge).toMatchObject({ start_date: '2025-03-31', end_date: '2025-03-31' });
    // an update of one date is checked against the stored other one
    const endFirst = expectError(
      await goalApi(t.admin).update('objectives', edge.uuid, { end_date: '2025-03-01' }),
      422,
      'validation_failed',
    );
    expect(endFirst.details).toEqual([expect.objectContaining({ field: 'end_date', code: 'order' })]);
    expectError(await goalApi(t.admin).update('objectives', edge.uuid, { start_date: '2025-04-01' }), 422, 'validation_failed');
    expectError(await goalApi(t.admin).create('objectives', { ...base, start_date: '2025-02-30' }), 422, 'validation_failed'); // not a calendar date
  });

  it('rule 3: a new time period resets the dates not sent; unknown or foreign periods are 422', async () => {
    const q2 = await createPeriod(t.admin, 'Q2 2025', '2025-04-01', '2025-06-30');
    const rec = await goal(t.admin, 'objectives', {
      title: 'Moves',
      time_period_uuid: period.uuid,
      start_date: '2025-02-01',
      end_date: '2025-02-28',
    });
    const moved = await goalApi(t.admin).update('objectives', rec.uuid, { time_period_uuid: q2.uuid });
    expect(moved.status).toBe(200);
    expect(moved.body.data.record).toMatchObject({ time_period_uuid: q2.uuid, start_date: '2025-04-01', end_date: '2025-06-30' });
    const back = await goalApi(t.admin).update('objectives', rec.uuid, { time_period_uuid: period.uuid, end_date: '2025-03-15' });
    expect(back.body.data.record).toMatchObject({ time_period_uuid: period.uuid, start_date: '2025-01-01', end_date: '2025-03-15' });
    // the same period sent again is not a change: dates stay
    const same = await goalApi(t.admin).update('objectives', rec.uuid, { time_period_uuid: period.uuid });
    expect(same.body.data.record).toMatchObject({ start_date: '2025-01-01', end_date: '2025-03-15' });
    const outside = expectError(
      await goalApi(t.admin).update('objectives', rec.uuid, { time_period_uuid: q2.uuid, start_date: '2025-01-10' }),
      422,
      'validation_failed',
    );
    expect(outside.details[0]).toMatchObject({ field: 'start_date', code: 'out_of_range' });
    for (const bad of ['00000000-0000-4000-8000-000000000000', other.period.uuid]) {
      const e = expectError(await goalApi(t.admin).create('objectives', { title: 'x', time_period_uuid: bad }), 422, 'validation_failed');
      expect(e.details[0]).toMatchObject({ field: 'time_period_uuid', code: 'not_found' });
      expectError(await goalApi(t.admin).update('objectives', rec.uuid, { time_period_uuid: bad }), 422, 'validation_failed');
    }
  });

  it('rule 4: short_id format, upper-case storage, case-insensitive uniqueness, release on change', async () => {
    const a = await goal(t.admin, 'objectives', { title: 'A', time_period_uuid: period.uuid });
    const b = await goal(t.admin, 'key_results', { title: 'B', time_period_uuid: period.uuid });
    for (const bad of ['x', 'x'.repeat(31), 'has space', 'dot.ted', '']) {
      const e = expectError(await goalApi(t.admin).update('objectives', a.uuid, { short_id: bad }), 422, 'validation_failed');
      expect(e.details[0]).toMatchObject({ field: 'short_id', code: 'malformed' });
    }
    const set = await goalApi(t.admin).update('objectives', a.uuid, { short_id: 'okr-1_a' });
    expect(set.body.data.record).toMatchObject({ short_id: 'OKR-1_A', short_id_uuid: expect.any(String), searchable_content: 'a okr-1_a' });
    // unique across kinds, ignoring case
    const taken = expectError(await goalApi(t.admin).update('key_results', b.uuid, { short_id: 'OKR-1_a' }), 422, 'taken');
    expect(taken.details[0]!.field).toBe('short_id');
    // setting the same value again is not a conflict with itself
    expect((await goalApi(t.admin).update('objectives', a.uuid, { short_id: 'OKR-1_A' })).status).toBe(200);
    // the old value is released when it changes or is cleared
    expect((await goalApi(t.admin).update('objectives', a.uuid, { short_id: 'OKR-2' })).status).toBe(200);
    expect((await goalApi(t.admin).update('key_results', b.uuid, { short_id: 'okr-1_a' })).body.data.record.short_id).toBe('OKR-1_A');
    const cleared = await goalApi(t.admin).update('objectives', a.uuid, { short_id: null });
    expect(cleared.body.data.record).toMatchObject({ short_id: null, short_id_uuid: null });
    expect((await goalApi(t.admin).update('key_results', b.uuid, { short_id: 'okr-2' })).status).toBe(200);
    // other tenants have their own short_ids
    const foreign = await goal(other.t.admin, 'objectives', { title: 'F', time_period_uuid: other.period.uuid });
    expect((await goalApi(other.t.admin).update('objectives', foreign.uuid, { short_id: 'OKR-2' })).status).toBe(200);
  });

  it('rule 4 under concurrency: exactly one of two simultaneous claims of a short_id wins', async () => {
    for (let round = 0; round < 3; round++) {
      const goals = await Promise.all(
        [1, 2, 3].map((i) => goal(t.admin, 'initiatives', { title: `race ${round} ${i}`, time_period_uuid: period.uuid })),
      );
      const value = `RACE-${round}`;
      const results = await Promise.all(
        goals.map((x, i) => goalApi(t.admin).update('initiatives', x.uuid, { short_id: i % 2 ? value.toLowerCase() : value })),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      for (const r of results.filter((r) => r.status !== 200)) expectError(r, 422, 'taken');
      await withinListLag(async () =>
        expect(await listAll(t.admin, `${P('initiatives')}?q[short_id_eq]=${value.toLowerCase()}`)).toHaveLength(1),
      );
    }
  });

  it('a create costs 2 DynamoDB round trips (the caller beside one batched read, one transaction), for an admin and a member, new or existing labels; an update 3 or 4', async () => {
    const member = await t.user({ role: 'member' });
    const team = (await t.admin.post('/rest/v2/teams', { name: `Budget team ${Date.now()}` })).body.data.record;
    for (const who of [t.admin, member.api]) {
      const body = {
        title: 'Budget',
        time_period_uuid: period.uuid,
        owner_uuids: [member.uuid],
        team_uuids: [team.uuid],
        delegate_uuids: [t.adminUuid],
        visible_entities: [{ entity_type: 'team' as const, entity_uuid: team.uuid }],
        labels: [`budget ${Math.random()}`],
        metric: { target_value: 10 },
      };
      const res = await who.post(P('objectives'), body);
      expect(res.status).toBe(201);
      expect(res.body.data.record.labels.map((l: { name: string }) => l.name)).toEqual(body.labels);
      expect(res.headers.get('x-db-round-trips')).toBe('2');
    }
    // naming an existing label reads only its name claim (which spells the name as stored), in the same batch
    const named = await t.admin.post(P('objectives'), { title: 'Budget', time_period_uuid: period.uuid, labels: ['budget shared'] });
    const again = await t.admin.post(P('objectives'), { title: 'Budget', time_period_uuid: period.uuid, labels: ['BUDGET shared'] });
    expect(again.body.data.record.labels).toEqual(named.body.data.record.labels);
    expect(again.headers.get('x-db-round-trips')).toBe('2');
    expect(again.headers.get('x-db-writes')).toBe('1');

    // an update: caller, the goal, one batch of what the body names (none for a title), one transaction; the
    // goal's labels are named from the names it keeps (nothing read to answer)
    for (const labels of [[], ['budget shared']]) {
      const plain = await goal(t.admin, 'objectives', { title: 'Budget', time_period_uuid: period.uuid, labels });
      const renamed = await t.admin.put(P('objectives', plain.uuid), { title: 'Budget, renamed' });
      expect(renamed.status).toBe(200);
      expect(renamed.body.data.record.labels).toEqual(plain.labels);
      expect(renamed.headers.get('x-db-round-trips')).toBe('3');
    }
    const plain = await goal(t.admin, 'objectives', { title: 'Budget', time_period_uuid: period.uuid });
    const reassigned = await t.admin.put(P('objectives', plain.uuid), {
      owner_uuids: [member.uuid],
      team_uuids: [team.uuid],
      end_date: '2025-03-01',
    });
    expect(reassigned.body.data.record).toMatchObject({ owner_uuids: [member.uuid], team_uuids: [team.uuid], end_date: '2025-03-01' });
    expect(reassigned.headers.get('x-db-round-trips')).toBe('4');
  });

  it('owners, delegates, teams and visible entities must exist in the tenant (422 naming each bad uuid)', async () => {
    const missing = '00000000-0000-4000-8000-000000000001';
    const foreignTeam = (await other.t.admin.post('/rest/v2/teams', { name: 'Foreign' })).body.data.record;
    const e = expectError(
      await goalApi(t.admin).create('objectives', {
        title: 'refs',
        time_period_uuid: period.uuid,
        owner_uuids: [other.t.adminUuid],
        delegate_uuids: [missing],
        team_uuids: [foreignTeam.uuid],
        visible_entities: [{ entity_type: 'team', entity_uuid: missing }],
      }),
      422,
      'validation_failed',
    );
    expect(e.details.map((d) => [d.field, d.code])).toEqual([
      ['owner_uuids', 'not_found'],
      ['delegate_uuids', 'not_found'],
      ['team_uuids', 'not_found'],
      ['visible_entities', 'not_found'],
    ]);
    expect(e.details[0]!.message).toContain(other.t.adminUuid);
    expect(e.details[2]!.message).toContain(foreignTeam.uuid);
    const rec = await goal(t.admin, 'objectives', { title: 'refs ok', time_period_uuid: period.uuid });
    const u = expectError(
      await goalApi(t.admin).update('objectives', rec.uuid, { owner_uuids: [t.adminUuid, missing] }),
      422,
      'validation_failed',
    );
    expect(u.details).toEqual([expect.objectContaining({ field: 'owner_uuids', message: expect.stringContaining(missing) })]);
    expectError(
      await goalApi(t.admin).create('objectives', { title: 'x', time_period_uuid: period.uuid, owner_uuids: ['not-a-uuid'] }),
      422,
      'validation_failed',
    );
  });

  it('metric: validated, mirrored as target/unit/metric_type, merged on update, removable', async () => {
    const base = { title: 'Metric', time_period_uuid: period.uuid };
    expectError(
      await goalApi(t.admin).create('key_results', { ...base, metric: { start_value: 5, target_value: 5 } }),
      422,
      'validation_failed',
    );
    const band = expectError(
      await goalApi(t.admin).create('key_results', { ...base, metric: { start_value: 10, target_value: 5, metric_type: 'stay_between' } }),
      422,
      'validation_failed',
    );
    expect(band.details[0]!.field).toBe('metric.target_value');
    expect(
      (await goalApi(t.admin).create('key_results', { ...base, metric: { start_value: 5, target_value: 5, metric_type: 'stay_above' } }))
        .status,
    ).toBe(201);
    const rec = await goal(t.admin, 'key_results', { ...base, metric: { target_value: 100, unit: '%' } });
    expect(rec).toMatchObject({ target: 100, unit: '%', metric_type: 'reach', current_progress: null });
    const changed = (await goalApi(t.admin).update('key_results', rec.uuid, { metric: { target_value: 50, metric_type: 'stay_below' } }))
      .body.data.record;
    expect(changed).toMatchObject({ target: 50, unit: '%', metric_type: 'stay_below', current_metric_uuid: rec.current_metric_uuid });
    expectError(
      await goalApi(t.admin).update('key_results', rec.uuid, { metric: { metric_type: 'reach', start_value: 50 } }),
      422,
      'validation_failed',
    );
    const removed = (await goalApi(t.admin).update('key_results', rec.uuid, { metric: null })).body.data.record;
    expect(removed).toMatchObject({ target: null, unit: null, metric_type: null, current_metric_uuid: null });
    const needsTarget = expectError(
      await goalApi(t.admin).update('key_results', rec.uuid, { metric: { unit: 'x' } }),
      422,
      'validation_failed',
    );
    expect(needsTarget.details[0]).toMatchObject({ field: 'metric.target_value', code: 'required' });
    const fresh = (await goalApi(t.admin).update('key_results', rec.uuid, { metric: { target_value: 3 } })).body.data.record;
    expect(fresh.current_metric_uuid).not.toBe(rec.current_metric_uuid);
  });

  it('a metric change recomputes current_progress from the current value', async () => {
    const kr = await goal(t.admin, 'key_results', {
      title: 'Progress',
      time_period_uuid: period.uuid,
      metric: { start_value: 0, target_value: 100 },
    });
    const ci = await t.admin.post('/rest/v2/checkins', { goal_uuid: kr.uuid, value: 50, status: 'on_track', checkin_date: '2025-02-01' });
    expect(ci.status).toBe(201);
    expect((await goalApi(t.admin).get('key_results', kr.uuid)).body.data.record).toMatchObject({
      current_value: 50,
      current_progress: 50,
    });
    const wider = (await goalApi(t.admin).update('key_results', kr.uuid, { metric: { target_value: 200 } })).body.data.record;
    expect(wider).toMatchObject({ current_value: 50, current_progress: 25, target: 200 });
    const above = (await goalApi(t.admin).update('key_results', kr.uuid, { metric: { metric_type: 'stay_above', target_value: 40 } })).body
      .data.record;
    expect(above.current_progress).toBe(100);
  });

  it('updates the plain fields; a status change records who and when', async () => {
    const rec = await goal(t.admin, 'objectives', { title: 'Before', time_period_uuid: period.uuid, labels: ['one'] });
    const res = await goalApi(t.admin).update('objectives', rec.uuid, {
      title: 'After',
      description: 'Now described',
      goal_type: 'committed',
      visibility: 'limited',
      current_status: 'on_track',
      progress_mode: 'integration',
      labels: ['two', 'Three'],
    });
    expect(res.status).toBe(200);
    const after = res.body.data.record;
    expect(after).toMatchObject({
      title: 'After',
      description: 'Now described',
      goal_type: 'committed',
      visibility: 'limited',
      current_status: 'on_track',
      status: 'on_track',
      status_updated_by_uuid: t.adminUuid,
      progress_mode: 'integration',
      searchable_content: 'after now described',
      created_at: rec.created_at,
    });
    expect(after.labels.map((l: { name: string }) => l.name)).toEqual(['two', 'Three']);
    expect(after.status_updated_at).toEqual(expect.any(String));
    expect(after.updated_at > rec.updated_at).toBe(true);
    expectError(await t.admin.put(P('objectives', rec.uuid), { current_status: 'done' }), 422, 'validation_failed');
    expectError(await goalApi(t.admin).update('objectives', rec.uuid, { title: '  ' }), 422, 'validation_failed');
  });

  it('a goal with many associations stays editable: a write counts only the index items it changes', async () => {
    // at the caps (GOAL_LIMITS; their worst cases are in goals-limits.test.ts)
    const teams = await Promise.all(
      Array.from(
        { length: GOAL_LIMITS.teams },
        async (_, i) => (await t.admin.post('/rest/v2/teams', { name: `Wide team ${i}` })).body.data.record.uuid as string,
      ),
    );
    const labels = Array.from({ length: GOAL_LIMITS.labels }, (_, i) => `wide label ${i}`);
    await goal(t.admin, 'objectives', { title: 'creates the labels', time_period_uuid: period.uuid, labels });
    const parents = await Promise.all(
      Array.from({ length: GOAL_LIMITS.parents }, (_, i) =>
        goal(t.admin, 'objectives', { title: `wide parent ${i}`, time_period_uuid: period.uuid }),
      ),
    );
    const wide = await goal(t.admin, 'key_results', {
      title: 'Wide',
      time_period_uuid: period.uuid,
      team_uuids: teams,
      labels,
      parents: parents.map((p) => p.uuid),
    });
    const renamed = await goalApi(t.admin).update('key_results', wide.uuid, { title: 'Wide, renamed' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.record).toMatchObject({ title: 'Wide, renamed', team_uuids: teams });
    const relabelled = await goalApi(t.admin).update('key_results', wide.uuid, { labels: labels.slice(1), visibility: 'limited' });
    expect(relabelled.status).toBe(200);
    expect(relabelled.body.data.record.labels).toHaveLength(GOAL_LIMITS.labels - 1);
    expect((await goalApi(t.admin).remove('key_results', wide.uuid)).status).toBe(200);
  });

  it('archive and unarchive (extension): set and clear archived_at/by, idempotent, wrapper response', async () => {
    const rec = await goal(t.admin, 'initiatives', { title: 'Old', time_period_uuid: period.uuid });
    const a = await goalApi(t.admin).archive('initiatives', rec.uuid);
    expect(a.status).toBe(200);
    expect(a.body.data.type).toBe('initiative');
    expect(a.body.data.record).toMatchObject({ archived_at: expect.any(String), archived_by_uuid: t.adminUuid });
    expect(a.body.data.checks).toMatchObject({ can_checkin: false, can_update: true });
    const again = await goalApi(t.admin).archive('initiatives', rec.uuid);
    expect(again.body.data.record.archived_at).toBe(a.body.data.record.archived_at);
    await withinListLag(async () =>
      expect((await listAll(t.admin, `${P('initiatives')}?q[archived_at_not_null]=1`)).map((x) => x.uuid)).toContain(rec.uuid),
    );
    const u = await goalApi(t.admin).unarchive('initiatives', rec.uuid);
    expect(u.body.data.record).toMatchObject({ archived_at: null, archived_by_uuid: null });
    await withinListLag(async () =>
      expect((await listAll(t.admin, `${P('initiatives')}?q[archived_at_not_null]=1`)).map((x) => x.uuid)).not.toContain(rec.uuid),
    );
  });

  it('isolates tenants: another tenant’s goal is 404 for get, update, delete, archive; 422 as a parent', async () => {
    const foreign = await goal(other.t.admin, 'objectives', { title: 'Theirs', time_period_uuid: other.period.uuid });
    expectError(await goalApi(t.admin).get('objectives', foreign.uuid), 404, 'not_found');
    expectError(await goalApi(t.admin).update('objectives', foreign.uuid, { title: 'mine' }), 404, 'not_found');
    expectError(await goalApi(t.admin).remove('objectives', foreign.uuid), 404, 'not_found');
    expectError(await goalApi(t.admin).archive('objectives', foreign.uuid), 404, 'not_found');
    expectError(await goalApi(t.admin).unarchive('objectives', foreign.uuid), 404, 'not_found');
    const e = expectError(
      await goalApi(t.admin).create('key_results', { title: 'x', time_period_uuid: period.uuid, parents: [foreign.uuid] }),
      422,
      'validation_failed',
    );
    expect(e.details[0]).toMatchObject({ field: 'parents', code: 'not_found' });
    const all = await listAll(t.admin, `${P('objectives')}?q[uuid_eq]=${foreign.uuid}`);
    expect(all).toEqual([]);
    expect((await goalApi(other.t.admin).get('objectives', foreign.uuid)).body.data.record.title).toBe('Theirs');
  });
});

describe('goals: permissions and limited visibility', () => {
  let g: GoalTenant;
  let t: TenantFixture;
  let member: Awaited<ReturnType<TenantFixture['user']>>;
  let teammate: Awaited<ReturnType<TenantFixture['user']>>;
  let stranger: Awaited<ReturnType<TenantFixture['user']>>;
  let named: Awaited<ReturnType<TenantFixture['user']>>;
  let viewer: Awaited<ReturnType<TenantFixture['user']>>;
  let teamOwner: Awaited<ReturnType<TenantFixture['user']>>;
  let team: { uuid: string };
  beforeAll(async () => {
    g = await goalTenant();
    t = g.t;
    [member, teammate, stranger, named, viewer, teamOwner] = await Promise.all([
      t.user(),
      t.user(),
      t.user(),
      t.user(),
      t.user({ role: 'viewer' }),
      t.user(),
    ]);
    team = (await t.admin.post('/rest/v2/teams', { name: 'Secret team', member_uuids: [teammate.uuid], owner_uuids: [teamOwner.uuid] }))
      .body.data.record;
  });

  it('members create goals and may change their own; viewers create nothing', async () => {
    const res = await goalApi(member.api).create('objectives', { title: 'Mine', time_period_uuid: g.period.uuid });
    expect(res.status).toBe(201);
    expect(res.body.data.access_source).toBe('creator');
    expect(res.body.data.checks).toEqual({ can_update: true, can_delete: true, can_checkin: true, can_archive: true });
    expectError(await goalApi(viewer.api).create('objectives', { title: 'No', time_period_uuid: g.period.uuid }), 403, 'forbidden');
    expect((await viewer.api.get(P('objectives'))).body.data.checks).toEqual({ can_create: false });
    expect((await member.api.get(P('objectives'))).body.data.checks).toEqual({ can_create: true });

    const id = res.body.data.record.uuid;
    const seen = await goalApi(stranger.api).get('objectives', id);
    expect(seen.status).toBe(200);
    expect(seen.body.data.access_source).toBe('public');
    expect(seen.body.data.checks).toEqual({ can_update: false, can_delete: false, can_checkin: false, can_archive: false });
    expectError(await goalApi(stranger.api).update('objectives', id, { title: 'hijack' }), 403, 'forbidden');
    expectError(await goalApi(stranger.api).remove('objectives', id), 403, 'forbidden');
    expectError(await goalApi(stranger.api).archive('objectives', id), 403, 'forbidden');
    expectError(await goalApi(viewer.api).update('objectives', id, { title: 'x' }), 403, 'forbidden');
    expect((await goalApi(member.api).update('objectives', id, { title: 'Mine, renamed' })).status).toBe(200);

    // an owner (made by the creator) may change it; the team owner of a goal's team too; a viewer owner may not
    const owned = await goal(member.api, 'key_results', {
      title: 'Owned',
      time_period_uuid: g.period.uuid,
      owner_uuids: [stranger.uuid, viewer.uuid],
      team_uuids: [team.uuid],
    });
    const asOwner = await goalApi(stranger.api).update('key_results', owned.uuid, { description: 'owner edit' });
    expect(asOwner.status).toBe(200);
    expect(asOwner.body.data.access_source).toBe('owner');
    expect((await goalApi(teamOwner.api).update('key_results', owned.uuid, { description: 'team owner edit' })).status).toBe(200);
    expectError(await goalApi(teammate.api).update('key_results', owned.uuid, { description: 'team member edit' }), 403, 'forbidden');
    expectError(await goalApi(viewer.api).update('key_results', owned.uuid, { description: 'viewer edit' }), 403, 'forbidden');
  });

  it('a limited goal is hidden from unrelated members (list and 403 on get) and visible to its people', async () => {
    const limited = await goal(t.admin, 'objectives', {
      title: 'Hush',
      time_period_uuid: g.period.uuid,
      visibility: 'limited',
      team_uuids: [team.uuid],
      visible_entities: [{ entity_type: 'user', entity_uuid: named.uuid, mode: 'view' }],
    });
    const pub = await goal(t.admin, 'objectives', { title: 'Open', time_period_uuid: g.period.uuid });

    const strangerList = await withinListLag(async () => {
      const listed = (await listAll(stranger.api, P('objectives'))).map((x) => x.uuid);
      expect(listed).toContain(pub.uuid);
      return listed;
    });
    expect(strangerList).not.toContain(limited.uuid);
    expectError(await goalApi(stranger.api).get('objectives', limited.uuid), 403, 'forbidden');
    expectError(await goalApi(stranger.api).update('objectives', limited.uuid, { title: 'x' }), 403, 'forbidden');
    // a filter that names it does not reveal it either
    expect(await listAll(stranger.api, `${P('objectives')}?q[uuid_eq]=${limited.uuid}`)).toEqual([]);
    expect(await listAll(stranger.api, `${P('objectives')}?q[teams_uuid_eq]=${team.uuid}`)).toEqual([]);

    for (const [who, source] of [
      [teammate, 'team'],
      [teamOwner, 'team'],
      [named, 'visible_entity'],
    ] as const) {
      expect((await listAll(who.api, P('objectives'))).map((x) => x.uuid)).toContain(limited.uuid);
      const got = await goalApi(who.api).get('objectives', limited.uuid);
      expect(got.status).toBe(200);
      expect(got.body.data.access_source).toBe(source);
    }
    // view mode does not allow changes; edit mode does
    expectError(await goalApi(named.api).update('objectives', limited.uuid, { title: 'x' }), 403, 'forbidden');
    await goalApi(t.admin).update('objectives', limited.uuid, {
      visible_entities: [
        { entity_type: 'user', entity_uuid: named.uuid, mode: 'edit' },
        { entity_type: 'user', entity_uuid: stranger.uuid },
      ],
    });
    expect((await goalApi(named.api).update('objectives', limited.uuid, { description: 'edited by a named editor' })).status).toBe(200);
    // the stranger now sees it (view), and lists show it
    expect((await goalApi(stranger.api).get('objectives', limited.uuid)).status).toBe(200);
    await withinListLag(async () => expect((await listAll(stranger.api, P('objectives'))).map((x) => x.uuid)).toContain(limited.uuid));
    // making it public shows it to everyone
    await goalApi(t.admin).update('objectives', limited.uuid, { visibility: 'public', visible_entities: [] });
    expect((await goalApi(member.api).get('objectives', limited.uuid)).body.data.access_source).toBe('public');
  });

  it('a team named in visible_entities lets its members see the goal', async () => {
    const other = (await t.admin.post('/rest/v2/teams', { name: 'Viewers team', member_uuids: [member.uuid] })).body.data.record;
    const limited = await goal(t.admin, 'initiatives', {
      title: 'Team-visible',
      time_period_uuid: g.period.uuid,
      visibility: 'limited',
      visible_entities: [{ entity_type: 'team', entity_uuid: other.uuid }],
    });
    // access through a team follows the team's member list, an index: within the lists' 2 s (contract section 14)
    await withinListLag(async () =>
      expect((await goalApi(member.api).get('initiatives', limited.uuid)).body.data.access_source).toBe('visible_entity'),
    );
    await withinListLag(async () => expect((await listAll(member.api, P('initiatives'))).map((x) => x.uuid)).toContain(limited.uuid));
    expectError(await goalApi(stranger.api).get('initiatives', limited.uuid), 403, 'forbidden');
  });

  it('a limited goal the caller cannot see cannot be used as a parent (422, existence not revealed)', async () => {
    const hidden = await goal(t.admin, 'objectives', { title: 'Hidden parent', time_period_uuid: g.period.uuid, visibility: 'limited' });
    const e = expectError(
      await goalApi(stranger.api).create('key_results', { title: 'child', time_period_uuid: g.period.uuid, parents: [hidden.uuid] }),
      422,
      'validation_failed',
    );
    expect(e.details[0]).toMatchObject({ field: 'parents', code: 'not_found' });
  });

  it('cross-tenant users and teams are 422 as owners; an unrelated tenant never sees the goals', async () => {
    const foreign = await newTenant();
    expectError(
      await goalApi(t.admin).create('objectives', { title: 'x', time_period_uuid: g.period.uuid, owner_uuids: [foreign.adminUuid] }),
      422,
      'validation_failed',
    );
    expect(await listAll(foreign.admin, P('objectives'))).toEqual([]);
  });
});
