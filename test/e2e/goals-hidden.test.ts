import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, listAll, type TenantFixture } from '../support/api.ts';
import { createPeriod, goal, goalTenant, P, sorted, uuids, type GoalTenant, goalApi } from './goals.fixture.ts';
import { checkin } from './checkins.fixture.ts';
import { eventually } from '../support/eventually.ts';

/**
 * Filters on associations consider only associated records that exist (contract 4: a deleted label is no
 * associated record) and that the caller may see (contract 5: what the caller may not see stays hidden);
 * messages never name a goal the caller cannot see.
 */
describe('goals: association filters see only what exists and what the caller may see', () => {
  let g: GoalTenant;
  let t: TenantFixture;
  let member: Awaited<ReturnType<TenantFixture['user']>>;
  let insider: Awaited<ReturnType<TenantFixture['user']>>;
  let q2: GoalTenant['period'];
  const ids = async (api: TenantFixture['admin'], path: string, query: string) => sorted(uuids(await listAll(api, `${path}?${query}`)));

  beforeAll(async () => {
    g = await goalTenant();
    t = g.t;
    [member, insider] = await Promise.all([t.user(), t.user()]);
    q2 = await createPeriod(t.admin, 'Q2', '2025-04-01', '2025-06-30');
  });

  it('a deleted label matches no labels_* filter; labels_uuid_null and labels_name_null agree', async () => {
    const both = await goal(t.admin, 'objectives', {
      title: 'doomed and kept',
      time_period_uuid: g.period.uuid,
      labels: ['Doomed', 'Kept'],
    });
    const only = await goal(t.admin, 'objectives', { title: 'doomed only', time_period_uuid: g.period.uuid, labels: ['Doomed'] });
    const doomed = both.labels.find((l: { name: string }) => l.name === 'Doomed')!.uuid;
    const kept = both.labels.find((l: { name: string }) => l.name === 'Kept')!.uuid;
    const OB = P('objectives');
    const mine = `q[uuid_in]=${both.uuid},${only.uuid}`;
    expect(await ids(t.admin, OB, `q[labels_uuid_eq]=${doomed}`)).toEqual(sorted([both.uuid, only.uuid]));

    expect((await t.admin.delete(`/rest/v2/labels/${doomed}`)).status).toBe(200);
    // the goal keeps its labels' names; the change stream drops the deleted one (some time after)
    await eventually(async () => expect((await goalApi(t.admin).get('objectives', only.uuid)).body.data.record.labels).toEqual([]));
    for (const api of [t.admin, member.api]) {
      expect(await ids(api, OB, `q[labels_uuid_eq]=${doomed}`)).toEqual([]);
      expect(await ids(api, OB, `q[labels_uuid_in]=${doomed},${kept}`)).toEqual([both.uuid]);
      expect(await ids(api, OB, `${mine}&q[labels_uuid_in]=${doomed},${kept}`)).toEqual([both.uuid]); // as a residual too
      expect(await ids(api, OB, `${mine}&q[labels_uuid_eq]=${doomed}`)).toEqual([]);
      expect(await ids(api, OB, `${mine}&q[labels_uuid_null]=1`)).toEqual([only.uuid]);
      expect(await ids(api, OB, `${mine}&q[labels_name_null]=1`)).toEqual([only.uuid]);
      expect(await ids(api, OB, `${mine}&q[labels_uuid_present]=1`)).toEqual([both.uuid]);
      expect(await ids(api, OB, `${mine}&q[labels_uuid_not_eq]=${kept}`)).toEqual([only.uuid]);
      expect(await ids(api, OB, 'q[labels_name_eq]=doomed')).toEqual([]);
    }
  });

  it('ancestors_* and links_as_child_* never evaluate a goal the caller cannot see', async () => {
    // hidden (limited, Q2; seen by admins and the insider) → child (public, Q1) → grandchild (public, Q1)
    const hidden = await goal(t.admin, 'objectives', {
      title: 'hidden parent',
      time_period_uuid: q2.uuid,
      visibility: 'limited',
      owner_uuids: [insider.uuid],
    });
    const child = await goal(t.admin, 'key_results', { title: 'public child', time_period_uuid: g.period.uuid, parents: [hidden.uuid] });
    const grandchild = await goal(t.admin, 'initiatives', {
      title: 'public grandchild',
      time_period_uuid: g.period.uuid,
      parents: [child.uuid],
    });
    const KR = P('key_results');
    const IN = P('initiatives');
    const onlyChild = `q[uuid_eq]=${child.uuid}`;
    const onlyGrandchild = `q[uuid_eq]=${grandchild.uuid}`;
    expect(await ids(member.api, KR, `${onlyChild}&q[ancestors_current_status_eq]=at_risk`)).toEqual([]);
    await checkin(t.admin, { goal_uuid: hidden.uuid, status: 'at_risk', checkin_date: '2025-05-02' });

    // the caller who sees the parent: every filter evaluates it
    for (const api of [t.admin, insider.api]) {
      expect(await ids(api, KR, `${onlyChild}&q[ancestors_current_status_eq]=at_risk`)).toEqual([child.uuid]);
      expect(await ids(api, KR, `${onlyChild}&q[ancestors_status_eq]=at_risk`)).toEqual([child.uuid]);
      expect(await ids(api, KR, `${onlyChild}&q[ancestors_last_checkin_date_eq]=2025-05-02`)).toEqual([child.uuid]);
      expect(await ids(api, KR, `${onlyChild}&q[ancestors_time_period_uuid_eq]=${q2.uuid}`)).toEqual([child.uuid]);
      expect(await ids(api, KR, `q[ancestors_uuid_eq]=${hidden.uuid}`)).toEqual([child.uuid]);
      expect(await ids(api, IN, `q[ancestors_uuid_eq]=${hidden.uuid}`)).toEqual([grandchild.uuid]);
      expect(await ids(api, IN, `${onlyGrandchild}&q[ancestors_type_eq]=objective`)).toEqual([grandchild.uuid]);
      expect(await ids(api, KR, `q[links_as_child_uuid_eq]=${hidden.uuid}`)).toEqual([child.uuid]);
      expect(await ids(api, KR, `q[links_as_child_ancestor_uuid_in]=${hidden.uuid}`)).toEqual([child.uuid]);
      expect(await ids(api, KR, `${onlyChild}&q[links_as_child_uuid_null]=1`)).toEqual([]);
    }

    // the member who cannot see it: the hidden parent is no associated record, its fields decide nothing
    const m = member.api;
    expect(await ids(m, KR, `${onlyChild}&q[ancestors_current_status_eq]=at_risk`)).toEqual([]);
    expect(await ids(m, KR, `${onlyChild}&q[ancestors_status_eq]=at_risk`)).toEqual([]);
    expect(await ids(m, KR, `${onlyChild}&q[ancestors_last_checkin_date_not_null]=1`)).toEqual([]);
    expect(await ids(m, KR, `${onlyChild}&q[ancestors_time_period_uuid_eq]=${q2.uuid}`)).toEqual([]);
    expect(await ids(m, KR, `${onlyChild}&q[ancestors_type_eq]=objective`)).toEqual([]);
    expect(await ids(m, KR, `${onlyChild}&q[ancestors_creator_uuid_eq]=${t.adminUuid}`)).toEqual([]);
    expect(await ids(m, KR, `${onlyChild}&q[ancestors_uuid_null]=1`)).toEqual([child.uuid]);
    expect(await ids(m, KR, `${onlyChild}&q[ancestors_current_status_not_eq]=at_risk`)).toEqual([child.uuid]);
    // naming the hidden goal matches nothing, by index or on the items, and no walk passes through it
    expect(await ids(m, KR, `q[ancestors_uuid_eq]=${hidden.uuid}`)).toEqual([]);
    expect(await ids(m, IN, `q[ancestors_uuid_eq]=${hidden.uuid}`)).toEqual([]);
    expect(await ids(m, KR, `${onlyChild}&q[ancestors_uuid_not_eq]=${hidden.uuid}`)).toEqual([child.uuid]);
    expect(await ids(m, IN, `${onlyGrandchild}&q[ancestors_type_eq]=objective`)).toEqual([]); // only the child is above it
    expect(await ids(m, IN, `q[ancestors_uuid_eq]=${child.uuid}`)).toEqual([grandchild.uuid]);
    expect(await ids(m, IN, `${onlyGrandchild}&q[ancestors_type_eq]=key_result`)).toEqual([grandchild.uuid]);
    expect(await ids(m, KR, `q[links_as_child_uuid_eq]=${hidden.uuid}`)).toEqual([]);
    expect(await ids(m, KR, `q[links_as_child_ancestor_uuid_eq]=${hidden.uuid}`)).toEqual([]);
    expect(await ids(m, KR, `${onlyChild}&q[links_as_child_uuid_in]=${hidden.uuid}`)).toEqual([]);
    expect(await ids(m, KR, `${onlyChild}&q[links_as_child_uuid_null]=1`)).toEqual([child.uuid]);
    expect(await ids(m, KR, `${onlyChild}&q[links_as_child_contribution_percent_eq]=100`)).toEqual([]);
    expect(await ids(m, IN, `q[links_as_child_uuid_eq]=${child.uuid}`)).toEqual([grandchild.uuid]);
  });

  it('a team deleted after being named in visible_entities grants nothing; the list still round-trips', async () => {
    const seer = await t.user();
    const team = (await t.admin.post('/rest/v2/teams', { name: 'short-lived', member_uuids: [seer.uuid] })).body.data.record;
    const shared = await goal(t.admin, 'objectives', {
      title: 'shared with a team',
      time_period_uuid: g.period.uuid,
      visibility: 'limited',
      visible_entities: [{ entity_type: 'team', entity_uuid: team.uuid, mode: 'edit' }],
    });
    expect((await goalApi(seer.api).get('objectives', shared.uuid)).body.data.access_source).toBe('visible_entity');

    // decision (README): no index entry for team-type visible entities, so the team delete is not refused
    expect((await t.admin.delete(`/rest/v2/teams/${team.uuid}`)).status).toBe(200);
    expectError(await goalApi(seer.api).get('objectives', shared.uuid), 403, 'forbidden');
    expect(await ids(seer.api, P('objectives'), `q[uuid_eq]=${shared.uuid}`)).toEqual([]);
    const now = (await goalApi(t.admin).get('objectives', shared.uuid)).body.data.record;
    expect(now.visible_entities).toEqual([{ entity_type: 'team', entity_uuid: team.uuid, mode: 'edit' }]);
    // sending the goal's own list back is not refused; naming the deleted team anew is
    expect(
      (await goalApi(t.admin).update('objectives', shared.uuid, { title: 'renamed', visible_entities: now.visible_entities })).status,
    ).toBe(200);
    const fresh = expectError(
      await goalApi(t.admin).create('objectives', {
        title: 'x',
        time_period_uuid: g.period.uuid,
        visible_entities: [{ entity_type: 'team', entity_uuid: team.uuid }],
      }),
      422,
      'validation_failed',
    );
    expect(fresh.details[0]).toMatchObject({ field: 'visible_entities', code: 'not_found' });
  });

  it('a refused hierarchy delete names only goals the caller can see', async () => {
    const root = await goal(member.api, 'objectives', { title: 'member root', time_period_uuid: g.period.uuid });
    const secret = await goal(t.admin, 'initiatives', {
      title: 'secret below',
      time_period_uuid: g.period.uuid,
      visibility: 'limited',
      parents: [root.uuid],
    });
    const refused = expectError(await goalApi(member.api).remove('objectives', root.uuid, { delete_hierarchy: true }), 403, 'forbidden');
    expect(refused.message).not.toContain(secret.uuid);
    expect(JSON.stringify(refused)).not.toContain(secret.uuid);
    expect(refused.message).toMatch(/cannot delete/);

    // a visible goal the caller may not change is named
    const shown = await goal(t.admin, 'key_results', { title: 'shown below', time_period_uuid: g.period.uuid, parents: [root.uuid] });
    await goalApi(t.admin).update('initiatives', secret.uuid, { visibility: 'public' });
    const named = expectError(await goalApi(member.api).remove('objectives', root.uuid, { delete_hierarchy: true }), 403, 'forbidden');
    expect([secret.uuid, shown.uuid].some((id) => named.message.includes(id))).toBe(true);
    expect((await goalApi(t.admin).get('objectives', root.uuid)).body.data.record.discarded_at).toBeNull();
  });
});
