import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, listAll, type TenantFixture } from '../support/api.ts';
import { createPeriod, goal, goalTenant, P, sorted, uuids, type GoalTenant, goalApi } from './goals.fixture.ts';

describe('goals: pagination', () => {
  it('pages through every record once, in creation order, with pagy and count', async () => {
    const { t, period } = await goalTenant();
    const made: string[] = [];
    for (let i = 0; i < 45; i++)
      made.push((await goal(t.admin, 'objectives', { title: `Page goal ${i}`, time_period_uuid: period.uuid })).uuid);
    // other kinds live in their own lists
    await goal(t.admin, 'key_results', { title: 'not an objective', time_period_uuid: period.uuid });

    const seen: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const res = await t.admin.get(`${P('objectives')}?page=${page}&per_page=20&count=true`);
      expect(res.status).toBe(200);
      const { pagy, records, type, filters } = res.body.data;
      expect(type).toBe('objective');
      expect(filters).toEqual({});
      expect(pagy).toEqual({
        page,
        per_page: 20,
        offset: 0,
        next: page < 3 ? page + 1 : null,
        prev: page > 1 ? page - 1 : null,
        count: 45,
        next_cursor: page < 3 ? expect.any(String) : null,
      });
      seen.push(...uuids(records));
    }
    expect(seen).toEqual(made);
    expect((await t.admin.get(`${P('objectives')}?page=4&per_page=20`)).body.data.records).toEqual([]);
    // limit alias, offset, limit_max and per_page clamping
    const off = (await t.admin.get(`${P('objectives')}?limit=5&offset=3`)).body.data;
    expect(uuids(off.records)).toEqual(made.slice(3, 8));
    expect(off.pagy.next).toBe(2);
    expect(uuids((await t.admin.get(`${P('objectives')}?limit=5&offset=3&page=2`)).body.data.records)).toEqual(made.slice(8, 13));
    expect((await t.admin.get(`${P('objectives')}?per_page=500`)).body.data.pagy.per_page).toBe(100);
    expect((await t.admin.get(`${P('objectives')}?limit_max=7`)).body.data.records).toHaveLength(7);
    expect(uuids((await t.admin.get(`${P('objectives')}?q[s]=created_at%20desc&per_page=3`)).body.data.records)).toEqual(
      made.slice(-3).reverse(),
    );
    expect(uuids(await listAll(t.admin, P('objectives'), 7))).toEqual(made);
    // a filtered list pages the same way
    const filtered: string[] = [];
    for (let page = 1; ; page++) {
      const res = await t.admin.get(
        `${P('objectives')}?q[time_period_uuid_eq]=${period.uuid}&q[title_cont]=goal%201&page=${page}&per_page=4`,
      );
      filtered.push(...uuids(res.body.data.records));
      if (!res.body.data.pagy.next) break;
    }
    expect(filtered).toEqual(made.filter((_, i) => String(i).startsWith('1')));
    expectError(await t.admin.get(`${P('objectives')}?page=0`), 400, 'bad_request');
    expectError(await t.admin.get(`${P('objectives')}?per_page=-1`), 400, 'bad_request');
  });
});

describe('goals: filters', () => {
  let g: GoalTenant;
  let t: TenantFixture;
  let q2: GoalTenant['period'];
  let alice: Awaited<ReturnType<TenantFixture['user']>>;
  let bob: Awaited<ReturnType<TenantFixture['user']>>;
  let teamA: any;
  let teamB: any;
  let group: any;
  // O1 (alice, teamA, labels Growth/Urgent, Q1) → K1 (bob delegate, label growth) → I1 (Q1)
  //                                            → K2 (alice owner, teamB, Q2-less: Q1)
  // O2 (bob owner, Q2, limited) → K3 (short_id KR-3, closed status via update)
  let o1: any, o2: any, k1: any, k2: any, k3: any, i1: any;
  const list = (path: string, query: string) => listAll(t.admin, `${path}?${query}`);
  const ids = async (path: string, query: string) => sorted(uuids(await list(path, query)));

  beforeAll(async () => {
    g = await goalTenant();
    t = g.t;
    q2 = await createPeriod(t.admin, 'Q2 2025', '2025-04-01', '2025-06-30');
    [alice, bob] = await Promise.all([t.user({ display_name: 'Alice Anders' }), t.user({ display_name: 'Bob Brown' })]);
    teamA = (await t.admin.post('/rest/v2/teams', { name: 'alpha', display_name: 'Alpha Team', is_org: true })).body.data.record;
    teamB = (await t.admin.post('/rest/v2/teams', { name: 'beta', display_name: 'Beta Team', parent_uuid: teamA.uuid })).body.data.record;
    group = (await t.admin.post('/rest/v2/labels', { name: 'Themes', is_group: true })).body.data.record;
    await t.admin.post('/rest/v2/labels', { name: 'Growth', parent_uuid: group.uuid });
    const tp = g.period.uuid;
    o1 = await goal(t.admin, 'objectives', {
      title: 'Grow the business',
      description: 'Expand',
      time_period_uuid: tp,
      owner_uuids: [alice.uuid],
      team_uuids: [teamA.uuid],
      labels: ['Growth', 'Urgent'],
      goal_type: 'committed',
    });
    o2 = await goal(t.admin, 'objectives', {
      title: 'Cut costs',
      time_period_uuid: q2.uuid,
      owner_uuids: [bob.uuid],
      visibility: 'limited',
      start_date: '2025-05-01',
    });
    k1 = await goal(t.admin, 'key_results', {
      title: 'Revenue up',
      time_period_uuid: tp,
      delegate_uuids: [bob.uuid],
      labels: ['growth'],
      parents: [o1.uuid],
      metric: { target_value: 10, unit: 'M' },
    });
    k2 = await goal(alice.api, 'key_results', {
      title: 'New markets',
      time_period_uuid: tp,
      owner_uuids: [alice.uuid],
      team_uuids: [teamB.uuid],
      parents: [o1.uuid],
    });
    k3 = await goal(t.admin, 'key_results', { title: 'Lower spend', time_period_uuid: q2.uuid, parents: [o2.uuid] });
    i1 = await goal(t.admin, 'initiatives', { title: 'Launch campaign', time_period_uuid: tp, parents: [k1.uuid] });
    await goalApi(t.admin).update('key_results', k3.uuid, { short_id: 'kr-3', current_status: 'closed' });
    await goalApi(t.admin).archive('key_results', k2.uuid);
  });

  it('own attributes: uuid, type, status, current_status, time period, title, short_id, goal_type, visibility, dates, creator, archived_at', async () => {
    const KR = P('key_results');
    const OB = P('objectives');
    expect(await ids(KR, `q[uuid_eq]=${k1.uuid}`)).toEqual([k1.uuid]);
    expect(await ids(KR, `q[uuid_in][]=${k1.uuid}&q[uuid_in][]=${k3.uuid}&q[uuid_in][]=${o1.uuid}`)).toEqual(sorted([k1.uuid, k3.uuid]));
    expect(await ids(KR, `q[uuid_in]=${k1.uuid},${k2.uuid}`)).toEqual(sorted([k1.uuid, k2.uuid]));
    expect(await ids(KR, `q[uuid_eq]=${o1.uuid}`)).toEqual([]); // an objective is not a key result
    expect(await ids(KR, `q[uuid_not_eq]=${k1.uuid}`)).toEqual(sorted([k2.uuid, k3.uuid]));
    expect(await ids(KR, 'q[type_eq]=key_result')).toEqual(sorted([k1.uuid, k2.uuid, k3.uuid]));
    expect(await ids(KR, 'q[current_status_eq]=closed')).toEqual([k3.uuid]);
    expect(await ids(KR, 'q[status_not_eq]=closed')).toEqual(sorted([k1.uuid, k2.uuid]));
    expect(await ids(KR, 'q[current_status_in]=on_track,closed')).toEqual([k3.uuid]);
    expect(await ids(KR, `q[time_period_uuid_eq]=${q2.uuid}`)).toEqual([k3.uuid]);
    expect(await ids(KR, `q[time_period_uuid_in][]=${q2.uuid}&q[time_period_uuid_in][]=${g.period.uuid}`)).toEqual(
      sorted([k1.uuid, k2.uuid, k3.uuid]),
    );
    expect(await ids(KR, `q[time_period_uuid_not_eq]=${q2.uuid}`)).toEqual(sorted([k1.uuid, k2.uuid]));
    expect(await ids(OB, 'q[title_cont]=GROW')).toEqual([o1.uuid]);
    expect(await ids(OB, 'q[title_start]=cut')).toEqual([o2.uuid]);
    expect(await ids(OB, 'q[title_not_cont]=grow')).toEqual([o2.uuid]);
    expect(await ids(OB, 'q[searchable_content_cont]=expand')).toEqual([o1.uuid]);
    expect(await ids(KR, 'q[short_id_eq]=KR-3')).toEqual([k3.uuid]);
    expect(await ids(KR, 'q[short_id_in]=kr-3,nope')).toEqual([k3.uuid]);
    expect(await ids(KR, 'q[short_id_null]=1')).toEqual(sorted([k1.uuid, k2.uuid]));
    expect(await ids(KR, 'q[short_id_present]=true')).toEqual([k3.uuid]);
    expect(await ids(OB, 'q[goal_type_eq]=committed')).toEqual([o1.uuid]);
    expect(await ids(OB, 'q[visibility_eq]=limited')).toEqual([o2.uuid]);
    expect(await ids(OB, 'q[progress_mode_eq]=manual')).toEqual(sorted([o1.uuid, o2.uuid]));
    expect(await ids(OB, 'q[start_date_gt]=2025-04-15')).toEqual([o2.uuid]);
    expect(await ids(OB, 'q[end_date_lteq]=2025-03-31')).toEqual([o1.uuid]);
    expect(await ids(KR, `q[creator_uuid_eq]=${alice.uuid}`)).toEqual([k2.uuid]);
    expect(await ids(KR, 'q[archived_at_not_null]=1')).toEqual([k2.uuid]);
    expect(await ids(KR, 'q[archived_at_null]=1')).toEqual(sorted([k1.uuid, k3.uuid]));
    expect(await ids(KR, 'q[last_checkin_date_null]=1')).toEqual(sorted([k1.uuid, k2.uuid, k3.uuid]));
    expect(await ids(KR, 'q[last_checkin_date_gteq]=2025-01-01')).toEqual([]);
    expect(await ids(KR, 'q[current_progress_null]=1&q[score_blank]=1')).toEqual(sorted([k1.uuid, k2.uuid, k3.uuid]));
    expect(await ids(KR, `q[created_at_gteq]=${encodeURIComponent(k2.created_at)}`)).toEqual(sorted([k2.uuid, k3.uuid]));
    // combined: index-served driver plus residuals
    expect(await ids(KR, `q[time_period_uuid_eq]=${g.period.uuid}&q[title_cont]=revenue`)).toEqual([k1.uuid]);
  });

  it('associations: time_period, owners, delegates, labels, teams', async () => {
    const KR = P('key_results');
    const OB = P('objectives');
    expect(await ids(KR, 'q[time_period_name_eq]=q2%202025')).toEqual([k3.uuid]);
    expect(await ids(KR, 'q[time_period_start_date_lt]=2025-02-01')).toEqual(sorted([k1.uuid, k2.uuid]));
    expect(await ids(KR, 'q[time_period_end_date_eq]=2025-06-30')).toEqual([k3.uuid]);

    expect(await ids(OB, `q[owners_uuid_eq]=${alice.uuid}`)).toEqual([o1.uuid]);
    expect(await ids(KR, `q[owners_uuid_in][]=${alice.uuid}&q[owners_uuid_in][]=${bob.uuid}`)).toEqual([k2.uuid]);
    expect(await ids(OB, 'q[owners_display_name_cont]=brown')).toEqual([o2.uuid]);
    expect(await ids(OB, 'q[owners_status_eq]=active')).toEqual(sorted([o1.uuid, o2.uuid]));
    expect(await ids(OB, 'q[owners_license_type_eq]=full&q[owners_manager_uuid_null]=1')).toEqual(sorted([o1.uuid, o2.uuid]));
    expect(await ids(KR, 'q[owners_uuid_null]=1')).toEqual(sorted([k1.uuid, k3.uuid]));

    expect(await ids(KR, `q[delegates_uuid_eq]=${bob.uuid}`)).toEqual([k1.uuid]);
    expect(await ids(KR, 'q[delegates_display_name_start]=bob')).toEqual([k1.uuid]);
    expect(await ids(KR, 'q[delegates_status_eq]=active&q[delegates_license_type_present]=1')).toEqual([k1.uuid]);
    expect(await ids(OB, `q[delegates_manager_uuid_eq]=${alice.uuid}`)).toEqual([]);

    const growth = o1.labels.find((l: { name: string }) => l.name === 'Growth');
    expect(await ids(KR, 'q[labels_name_eq]=GROWTH')).toEqual([k1.uuid]);
    expect(await ids(OB, 'q[labels_name_in]=urgent,unknown')).toEqual([o1.uuid]);
    expect(await ids(OB, 'q[labels_name_eq]=no%20such%20label')).toEqual([]);
    expect(await ids(OB, `q[labels_uuid_eq]=${growth.uuid}`)).toEqual([o1.uuid]);
    expect(await ids(KR, `q[labels_parent_uuid_eq]=${group.uuid}`)).toEqual([k1.uuid]);
    expect(await ids(OB, 'q[labels_is_group_false]=1')).toEqual([o1.uuid]);
    expect(await ids(OB, 'q[labels_name_not_eq]=growth')).toEqual(sorted([o1.uuid, o2.uuid])); // any label not named growth (o1 has Urgent), or none

    expect(await ids(OB, `q[teams_uuid_eq]=${teamA.uuid}`)).toEqual([o1.uuid]);
    expect(await ids(KR, `q[teams_uuid_in]=${teamA.uuid},${teamB.uuid}`)).toEqual([k2.uuid]);
    expect(await ids(OB, 'q[teams_display_name_eq]=alpha%20team')).toEqual([o1.uuid]);
    expect(await ids(KR, `q[teams_parent_uuid_eq]=${teamA.uuid}`)).toEqual([k2.uuid]);
    expect(await ids(KR, 'q[teams_depth_gt]=0')).toEqual([k2.uuid]);
    expect(await ids(OB, 'q[teams_is_org_true]=1&q[teams_status_eq]=active')).toEqual([o1.uuid]);
  });

  it('hierarchy associations: ancestors (any depth) and links_as_child (direct)', async () => {
    const KR = P('key_results');
    const IN = P('initiatives');
    expect(await ids(KR, `q[ancestors_uuid_eq]=${o1.uuid}`)).toEqual(sorted([k1.uuid, k2.uuid]));
    expect(await ids(IN, `q[ancestors_uuid_eq]=${o1.uuid}`)).toEqual([i1.uuid]); // grandchild
    expect(await ids(IN, `q[ancestors_uuid_in]=${o2.uuid},${k1.uuid}`)).toEqual([i1.uuid]);
    expect(await ids(KR, `q[ancestors_uuid_eq]=${k3.uuid}`)).toEqual([]);
    expect(await ids(IN, 'q[ancestors_type_eq]=objective')).toEqual([i1.uuid]);
    expect(await ids(KR, 'q[ancestors_visibility_eq]=limited').catch((e) => e.message)).toContain('400');
    expect(await ids(KR, `q[ancestors_creator_uuid_eq]=${t.adminUuid}&q[ancestors_time_period_uuid_eq]=${q2.uuid}`)).toEqual([k3.uuid]);
    expect(await ids(KR, 'q[ancestors_current_status_eq]=not_started&q[ancestors_status_eq]=not_started')).toEqual(
      sorted([k1.uuid, k2.uuid, k3.uuid]),
    );
    expect(await ids(IN, 'q[ancestors_last_checkin_date_null]=1&q[ancestors_archived_at_null]=1&q[ancestors_discarded_at_null]=1')).toEqual(
      [i1.uuid],
    );

    expect(await ids(KR, `q[links_as_child_ancestor_uuid_eq]=${o1.uuid}`)).toEqual(sorted([k1.uuid, k2.uuid]));
    expect(await ids(IN, `q[links_as_child_ancestor_uuid_eq]=${o1.uuid}`)).toEqual([]); // not a direct child
    expect(await ids(IN, `q[links_as_child_uuid_eq]=${k1.uuid}`)).toEqual([i1.uuid]);
    expect(await ids(KR, 'q[links_as_child_contribution_percent_eq]=100')).toEqual(sorted([k1.uuid, k2.uuid, k3.uuid]));
    expect(await ids(P('objectives'), 'q[links_as_child_uuid_null]=1')).toEqual(sorted([o1.uuid, o2.uuid]));
  });

  it('filters never reveal goals the caller cannot see; the echo shows parsed filters', async () => {
    expect(await sorted(uuids(await listAll(alice.api, `${P('objectives')}?q[owners_uuid_eq]=${bob.uuid}`)))).toEqual([]);
    expect(sorted(uuids(await listAll(bob.api, `${P('objectives')}?q[owners_uuid_eq]=${bob.uuid}`)))).toEqual([o2.uuid]);
    // k3 itself is public, but its parent o2 is limited: naming a goal alice cannot see matches nothing (contract 5)
    expect(uuids(await listAll(alice.api, `${P('key_results')}?q[ancestors_uuid_eq]=${o2.uuid}`))).toEqual([]);
    expect(uuids(await listAll(bob.api, `${P('key_results')}?q[ancestors_uuid_eq]=${o2.uuid}`))).toEqual([k3.uuid]);
    const res = await t.admin.get(
      `${P('key_results')}?q[current_status_in][]=closed&q[current_status_in][]=on_track&q[title_cont]=x&q[archived_at_null]=1`,
    );
    expect(res.body.data.filters).toEqual({ current_status_in: ['closed', 'on_track'], title_cont: 'x', archived_at_null: true });
  });

  it('refuses unknown attributes, predicates and bad values with 400 naming them', async () => {
    const unknown = expectError(await t.admin.get(`${P('objectives')}?q[colour_eq]=red`), 400, 'bad_request');
    expect(unknown.details[0]!.field).toBe('q[colour_eq]');
    const pred = expectError(await t.admin.get(`${P('objectives')}?q[title_like]=x`), 400, 'bad_request');
    expect(pred.details[0]!.code).toBe('unknown_predicate');
    expectError(await t.admin.get(`${P('objectives')}?q[start_date_lt]=soon`), 400, 'bad_request');
    expectError(await t.admin.get(`${P('objectives')}?q[current_progress_gt]=lots`), 400, 'bad_request');
    expectError(await t.admin.get(`${P('objectives')}?q[title_true]=1`), 400, 'bad_request');
    expectError(await t.admin.get(`${P('objectives')}?sort=title`), 400, 'bad_request');
  });
});

describe('goals: what a list costs, and the rules it keeps', () => {
  const rt = (res: { headers: Headers }) => Number(res.headers.get('x-db-round-trips'));

  it('starts with the caller’s read: a page, a count and a 3-level subtree in the round trips issue 9 budgets', async () => {
    const { t, period } = await goalTenant();
    const tp = period.uuid;
    const o = await goal(t.admin, 'objectives', { title: 'root', time_period_uuid: tp });
    const krs = [];
    for (let i = 0; i < 3; i++) krs.push(await goal(t.admin, 'key_results', { title: `kr ${i}`, time_period_uuid: tp, parents: [o.uuid] }));
    const inis = [];
    for (const kr of krs)
      for (let i = 0; i < 2; i++)
        inis.push(await goal(t.admin, 'initiatives', { title: `ini ${i}`, time_period_uuid: tp, parents: [kr.uuid] }));
    for (let i = 0; i < 25; i++) await goal(t.admin, 'objectives', { title: `more ${i}`, time_period_uuid: tp });

    // caller (with its teams) beside the first keys, then the page's goals (none shows a label)
    const page = await t.admin.get(P('objectives'));
    expect(page.body.data.records).toHaveLength(20);
    expect(rt(page)).toBe(2);
    // a count walked (small list: exact at once) beside the page's goals
    const counted = await t.admin.get(`${P('objectives')}?count=true&per_page=1`);
    expect(counted.body.data.pagy.count).toBe(26);
    expect(rt(counted)).toBeLessThanOrEqual(2);
    const inPeriod = await t.admin.get(`${P('key_results')}?count=true&per_page=1&q[time_period_uuid_eq]=${tp}`);
    expect(inPeriod.body.data.pagy.count).toBe(3);
    expect(rt(inPeriod)).toBeLessThanOrEqual(2);
    // three levels of Queries (the first beside the caller's read), then the page's goals
    const subtree = await t.admin.get(`${P('initiatives')}?q[ancestors_uuid_eq]=${o.uuid}`);
    expect(sorted(uuids(subtree.body.data.records))).toEqual(sorted(uuids(inis)));
    expect(rt(subtree)).toBeLessThanOrEqual(4);
    // a member's view of the subtree is judged once the member is known: a limited key result hides its branch
    const member = await t.user();
    await goalApi(t.admin).update('key_results', krs[0]!.uuid, { visibility: 'limited' });
    const seen = await member.api.get(`${P('initiatives')}?q[ancestors_uuid_eq]=${o.uuid}`);
    expect(sorted(uuids(seen.body.data.records))).toEqual(sorted(uuids(inis.slice(2))));
  });

  it('a refused caller wins over anything the list read or found wrong meanwhile (401 before 400), and nothing is answered', async () => {
    const { t } = await goalTenant();
    const member = await t.user();
    expect((await member.api.get(`${P('objectives')}?q[colour_eq]=red`)).status).toBe(400);
    expect((await t.admin.put(`/rest/v2/users/${member.uuid}`, { user: { status: 'inactive' } })).status).toBe(200);
    expectError(await member.api.get(`${P('objectives')}?q[colour_eq]=red`), 401, 'unauthorized');
    for (const query of ['', '?page=50', '?count=true', '?q[s]=last_checkin_date%20desc', `?q[ancestors_uuid_eq]=${t.adminUuid}`]) {
      expectError(await member.api.get(`${P('objectives')}${query}`), 401, 'unauthorized');
    }
  });
});
