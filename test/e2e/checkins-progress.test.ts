import type { GoalCreateBody } from '../../clients/typescript/src/index.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { listAll, type TenantFixture } from '../support/api.ts';
import { goal, goalTenant, type GoalTenant, goalApi } from './goals.fixture.ts';
import { CHECKINS, checkin, followed, goalNow, setContribution, checkinApi } from './checkins.fixture.ts';
import { withinListLag } from '../support/list-lag.ts';
import { eventually } from '../support/eventually.ts';

describe('check-ins move their goal', () => {
  let t: TenantFixture;
  let period: GoalTenant['period'];
  beforeAll(async () => {
    ({ t, period } = await goalTenant());
  });

  const withMetric = (title: string, metric: GoalCreateBody['metric']) =>
    goal(t.admin, 'key_results', { title, time_period_uuid: period.uuid, ...(metric ? { metric } : {}) });
  /** Checks in `value` and returns [check-in progress, goal current_progress]. */
  const progressAt = async (g: any, value: number) => {
    const c = await checkin(t.admin, { goal_uuid: g.uuid, value });
    return [c.progress, (await goalNow(t.admin, g)).current_progress];
  };

  it('computes progress for the four metric types (reach also decreasing), and without a metric', async () => {
    const reach = await withMetric('reach', { start_value: 0, target_value: 200, metric_type: 'reach' });
    expect(await progressAt(reach, 50)).toEqual([25, 25]);
    expect(await progressAt(reach, 250)).toEqual([100, 100]);
    expect(await progressAt(reach, -10)).toEqual([0, 0]);
    expect(await progressAt(reach, 30)).toEqual([15, 15]);

    const down = await withMetric('reach down', { start_value: 100, target_value: 20, metric_type: 'reach' });
    expect(await progressAt(down, 60)).toEqual([50, 50]);
    expect(await progressAt(down, 40)).toEqual([75, 75]);
    expect(await progressAt(down, 10)).toEqual([100, 100]);
    expect(await progressAt(down, 150)).toEqual([0, 0]);

    const above = await withMetric('stay above', { start_value: 0, target_value: 95, metric_type: 'stay_above' });
    expect(await progressAt(above, 95)).toEqual([100, 100]);
    expect(await progressAt(above, 94.5)).toEqual([0, 0]);

    const below = await withMetric('stay below', { start_value: 0, target_value: 3, metric_type: 'stay_below' });
    expect(await progressAt(below, 3)).toEqual([100, 100]);
    expect(await progressAt(below, 3.5)).toEqual([0, 0]);

    const between = await withMetric('stay between', { start_value: 10, target_value: 20, metric_type: 'stay_between' });
    expect(await progressAt(between, 10)).toEqual([100, 100]);
    expect(await progressAt(between, 20)).toEqual([100, 100]);
    expect(await progressAt(between, 9)).toEqual([0, 0]);
    expect(await progressAt(between, 21)).toEqual([0, 0]);

    // without a metric the value is the progress in percent
    const plain = await withMetric('no metric', undefined);
    expect(await progressAt(plain, 42)).toEqual([42, 42]);
    expect(await progressAt(plain, 120)).toEqual([100, 100]);
    // the goal carries the latest value
    expect((await goalNow(t.admin, down)).current_value).toBe(150);
  });

  it('follows the latest check-in: latest checkin_date, then latest created; back-dated ones do not move it', async () => {
    const g = await withMetric('latest', { start_value: 0, target_value: 100, metric_type: 'reach' });
    const c1 = await checkin(t.admin, { goal_uuid: g.uuid, value: 10, checkin_date: '2025-01-10', status: 'in_progress' });
    expect(followed(await goalNow(t.admin, g))).toEqual({
      current_value: 10,
      current_progress: 10,
      current_status: 'in_progress',
      score: null,
      last_checkin_date: '2025-01-10',
    });
    const c2 = await checkin(t.admin, { goal_uuid: g.uuid, value: 20, checkin_date: '2025-01-20', status: 'on_track' });
    expect(followed(await goalNow(t.admin, g))).toEqual({
      current_value: 20,
      current_progress: 20,
      current_status: 'on_track',
      score: null,
      last_checkin_date: '2025-01-20',
    });

    // back-dated: recorded, but the goal stays on c2
    const before = await goalNow(t.admin, g);
    const c3 = await checkin(t.admin, { goal_uuid: g.uuid, value: 5, checkin_date: '2025-01-05', status: 'behind' });
    const afterBackdated = await goalNow(t.admin, g);
    expect(followed(afterBackdated)).toEqual(followed(before));
    expect(afterBackdated.value_updated_at).toBe(c2.updated_at);

    // same date as the latest, created later: it wins
    const c4 = await checkin(t.admin, { goal_uuid: g.uuid, value: 25, checkin_date: '2025-01-20', status: 'closed', score: 0.7 });
    expect(followed(await goalNow(t.admin, g))).toEqual({
      current_value: 25,
      current_progress: 25,
      current_status: 'closed',
      score: 0.7,
      last_checkin_date: '2025-01-20',
    });

    // updating a check-in that is not the latest does not move the goal; updating the latest does
    await checkinApi(t.admin).update(c1.uuid, { value: 99, status: 'at_risk' });
    expect((await goalNow(t.admin, g)).current_value).toBe(25);
    const upd = await checkinApi(t.admin).update(c4.uuid, { value: 30 });
    const afterUpdate = await goalNow(t.admin, g);
    expect(followed(afterUpdate)).toEqual({
      current_value: 30,
      current_progress: 30,
      current_status: 'closed',
      score: 0.7,
      last_checkin_date: '2025-01-20',
    });
    expect(afterUpdate.value_updated_at).toBe(upd.body.updated_at);

    // deleting a check-in that is not the latest does not move the goal
    expect((await checkinApi(t.admin).remove(c3.uuid)).status).toBe(200);
    expect((await goalNow(t.admin, g)).current_value).toBe(30);
    // deleting the latest: the goal follows the one latest afterwards (c2, then c1 as updated)
    await checkinApi(t.admin).remove(c4.uuid);
    const afterDelete = await goalNow(t.admin, g);
    expect(followed(afterDelete)).toEqual({
      current_value: 20,
      current_progress: 20,
      current_status: 'on_track',
      score: null,
      last_checkin_date: '2025-01-20',
    });
    expect(afterDelete.value_updated_at).toBe(c2.updated_at);
    await checkinApi(t.admin).remove(c2.uuid);
    expect(followed(await goalNow(t.admin, g))).toEqual({
      current_value: 99,
      current_progress: 99,
      current_status: 'at_risk',
      score: null,
      last_checkin_date: '2025-01-10',
    });
    // no check-in left: back to the never-checked-in state
    await checkinApi(t.admin).remove(c1.uuid);
    const empty = await goalNow(t.admin, g);
    expect(followed(empty)).toEqual({
      current_value: null,
      current_progress: null,
      current_status: 'not_started',
      score: null,
      last_checkin_date: null,
    });
    expect([empty.value_updated_at, empty.value_updated_by_uuid, empty.status_updated_at, empty.status_updated_by_uuid]).toEqual([
      null,
      null,
      null,
      null,
    ]);
  });

  it('brings rollup ancestors up to date before returning, three levels deep, weighted by contribution', async () => {
    const O = await goal(t.admin, 'objectives', { title: 'O', time_period_uuid: period.uuid });
    const K = await goal(t.admin, 'key_results', { title: 'K', time_period_uuid: period.uuid, parents: [O.uuid] });
    const metric: GoalCreateBody['metric'] = { start_value: 0, target_value: 10, metric_type: 'reach' };
    const I1 = await goal(t.admin, 'initiatives', { title: 'I1', time_period_uuid: period.uuid, parents: [K.uuid], metric });
    const I2 = await goal(t.admin, 'initiatives', { title: 'I2', time_period_uuid: period.uuid, parents: [K.uuid], metric });
    expect((await goalApi(t.admin).update('objectives', O.uuid, { progress_mode: 'rollup' })).status).toBe(200);
    expect((await goalApi(t.admin).update('key_results', K.uuid, { progress_mode: 'rollup' })).status).toBe(200);
    const progress = async () => Promise.all([O, K, I1, I2].map(async (g) => (await goalNow(t.admin, g)).current_progress));
    // children without progress count as 0
    expect(await progress()).toEqual([0, 0, null, null]);

    await checkin(t.admin, { goal_uuid: I1.uuid, value: 4, checkin_date: '2025-01-01' });
    expect(await progress()).toEqual([20, 20, 40, null]);
    await checkin(t.admin, { goal_uuid: I2.uuid, value: 8, checkin_date: '2025-01-01' });
    expect(await progress()).toEqual([60, 60, 40, 80]);

    // a second, manual key result under O (created with its parent: O recomputed at once)
    const K2 = await goal(t.admin, 'key_results', { title: 'K2', time_period_uuid: period.uuid, parents: [O.uuid] });
    expect((await goalNow(t.admin, O)).current_progress).toBe(30);
    const k2c = await checkin(t.admin, { goal_uuid: K2.uuid, value: 100 }); // no metric: percent
    expect((await goalNow(t.admin, O)).current_progress).toBe(80);

    // contributions: I2 counts 3x towards K, K 3x towards O
    await setContribution(t.tenantUuid, I2.uuid, K.uuid, 300);
    await setContribution(t.tenantUuid, K.uuid, O.uuid, 300);
    // written straight into the table, past the parents' aggregates: the change stream's recompute repairs them
    // K = (40*100 + 80*300) / 400 = 70; O = (70*300 + 100*100) / 400 = 77.5
    await eventually(async () => expect(await progress()).toEqual([77.5, 70, 40, 80]));
    await checkin(t.admin, { goal_uuid: I1.uuid, value: 4.5, checkin_date: '2025-01-03' });
    // K = (45*100 + 80*300) / 400 = 71.25; O = (71.25*300 + 100*100) / 400 = 78.44 (2 decimals)
    expect(await progress()).toEqual([78.44, 71.25, 45, 80]);

    // a discarded child leaves the rollup; so does an archived one
    expect((await goalApi(t.admin).remove('initiatives', I1.uuid)).status).toBe(200);
    expect(await progress()).toEqual([85, 80, 45, 80]);
    expect((await goalApi(t.admin).archive('key_results', K2.uuid)).status).toBe(200);
    expect((await goalNow(t.admin, O)).current_progress).toBe(80);
    expect((await goalApi(t.admin).unarchive('key_results', K2.uuid)).status).toBe(200);
    expect((await goalNow(t.admin, O)).current_progress).toBe(85);
    // deleting K2's only check-in leaves it without progress (counts as 0)
    await checkinApi(t.admin).remove(k2c.uuid);
    expect((await goalNow(t.admin, O)).current_progress).toBe(60);

    // a check-in on a rollup goal sets its value and status; its progress stays its children's
    await checkin(t.admin, { goal_uuid: K.uuid, value: 3, status: 'at_risk' });
    expect(await goalNow(t.admin, K)).toMatchObject({ current_value: 3, current_status: 'at_risk', current_progress: 80 });
    expect((await goalNow(t.admin, O)).current_progress).toBe(60);
  });

  it('20 concurrent check-ins on one goal: no lost update, the goal equals its latest check-in', async () => {
    const g = await withMetric('concurrent', { start_value: 0, target_value: 200, metric_type: 'reach' });
    const days = Array.from({ length: 20 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
    const results = await Promise.all(
      days.map((d) =>
        checkinApi(t.admin).create({
          goal_uuid: g.uuid,
          value: d * 10,
          checkin_date: `2025-02-${String(d).padStart(2, '0')}`,
          status: d % 2 ? 'on_track' : 'behind',
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(days.map(() => 201));
    // a list: every acknowledged check-in listed within the lists' 2 s (contract 14)
    await withinListLag(async () => expect(await listAll(t.admin, `${CHECKINS}?q[checkinable_uuid_eq]=${g.uuid}`)).toHaveLength(20));
    const after = await goalNow(t.admin, g);
    expect(followed(after)).toEqual({
      current_value: 200,
      current_progress: 100,
      current_status: 'behind',
      score: null,
      last_checkin_date: '2025-02-20',
    });

    // all on the same date: the latest created wins (ties of one millisecond broken by uuid)
    const same = await withMetric('concurrent same day', { start_value: 0, target_value: 100, metric_type: 'reach' });
    const sameDay = await Promise.all(
      Array.from({ length: 20 }, (_, i) => checkinApi(t.admin).create({ goal_uuid: same.uuid, value: i + 1, checkin_date: '2025-02-10' })),
    );
    expect(sameDay.map((r) => r.status)).toEqual(sameDay.map(() => 201));
    const records = sameDay.map((r) => r.body.data.record);
    const latest = records.reduce((a, b) => (`${b.created_at}#${b.uuid}` > `${a.created_at}#${a.uuid}` ? b : a));
    expect(followed(await goalNow(t.admin, same))).toMatchObject({
      current_value: latest.value,
      current_progress: latest.value,
      last_checkin_date: '2025-02-10',
    });
  });

  it('concurrent check-ins on sibling goals leave their rollup parent equal to the average', async () => {
    const parent = await goal(t.admin, 'objectives', { title: 'Parent', time_period_uuid: period.uuid });
    expect((await goalApi(t.admin).update('objectives', parent.uuid, { progress_mode: 'rollup' })).status).toBe(200);
    const kids = await Promise.all(
      [1, 2, 3, 4, 5, 6, 7, 8].map((i) =>
        goal(t.admin, 'key_results', { title: `Kid ${i}`, time_period_uuid: period.uuid, parents: [parent.uuid] }),
      ),
    );
    const writes = kids.flatMap((k, i) =>
      Array.from({ length: 5 }, (_, j) => ({ goal_uuid: k.uuid, value: 10 * i + j * 7, checkin_date: `2025-03-0${j + 1}` })),
    );
    const results = await Promise.all(writes.sort(() => Math.random() - 0.5).map((b) => checkinApi(t.admin).create(b)));
    expect(results.every((r) => r.status === 201)).toBe(true);
    const kidProgress = await Promise.all(kids.map(async (k) => (await goalNow(t.admin, k)).current_progress));
    expect(kidProgress).toEqual([28, 38, 48, 58, 68, 78, 88, 98]); // each kid follows its 2025-03-05 check-in (j = 4)
    // read-your-writes: right after the last response, not eventually
    expect((await goalNow(t.admin, parent)).current_progress).toBe(63);
  }, 300_000);

  it('20 rounds of 8 concurrent check-ins on the leaves of a three-level rollup: every level is exact once all writers returned', async () => {
    const O = await goal(t.admin, 'objectives', { title: 'race O', time_period_uuid: period.uuid });
    const Ks = await Promise.all(
      [1, 2].map((i) => goal(t.admin, 'key_results', { title: `race K${i}`, time_period_uuid: period.uuid, parents: [O.uuid] })),
    );
    const leaves = await Promise.all(
      Ks.flatMap((K, k) =>
        [1, 2, 3, 4].map((i) =>
          goal(t.admin, 'initiatives', { title: `race I${k}.${i}`, time_period_uuid: period.uuid, parents: [K.uuid] }),
        ),
      ),
    );
    for (const K of Ks) expect((await goalApi(t.admin).update('key_results', K.uuid, { progress_mode: 'rollup' })).status).toBe(200);
    expect((await goalApi(t.admin).update('objectives', O.uuid, { progress_mode: 'rollup' })).status).toBe(200);
    // equal weights: a parent is the mean of its children, to 2 decimals (halves up), computed here in hundredths
    const mean = (hundredths: number[]) => Math.round(hundredths.reduce((a, b) => a + b, 0) / hundredths.length);
    for (let round = 0; round < 20; round++) {
      // 8 writers on random leaves (often two on one leaf), some back-dated behind a leaf's latest check-in
      const writes = Array.from({ length: 8 }, () => ({
        goal_uuid: leaves[Math.floor(Math.random() * leaves.length)]!.uuid,
        value: Math.round(Math.random() * 10000) / 100,
        checkin_date: `2025-02-${String(1 + Math.floor(Math.random() * 3) + round).padStart(2, '0')}`,
      }));
      const results = await Promise.all(writes.map((body) => checkinApi(t.admin).create(body)));
      expect(results.map((r) => r.status)).toEqual(writes.map(() => 201));
      // right after every writer returned: each level equals the mean of what its children show now
      const [o, k1, k2, ...leafProgress] = await Promise.all(
        [O, ...Ks, ...leaves].map(async (g) => (await goalNow(t.admin, g)).current_progress),
      );
      const K = [
        mean(leafProgress.slice(0, 4).map((p) => Math.round((p ?? 0) * 100))),
        mean(leafProgress.slice(4).map((p) => Math.round((p ?? 0) * 100))),
      ];
      expect([o, k1, k2], `round ${round}`).toEqual([mean(K), ...K].map((h) => h / 100));
    }
  }, 300_000);

  it('weights the rollup by contribution_percent set through the API (parents as {parent_uuid, contribution_percent})', async () => {
    const parent = await goal(t.admin, 'objectives', { title: 'weighted parent', time_period_uuid: period.uuid });
    expect((await goalApi(t.admin).update('objectives', parent.uuid, { progress_mode: 'rollup' })).status).toBe(200);
    const a = await goal(t.admin, 'key_results', {
      title: 'a',
      time_period_uuid: period.uuid,
      parents: [{ parent_uuid: parent.uuid, contribution_percent: 25 }],
    });
    const b = await goal(t.admin, 'key_results', { title: 'b', time_period_uuid: period.uuid, parents: [parent.uuid] });
    expect(a.parent_links).toEqual([{ parent_uuid: parent.uuid, contribution_percent: 25 }]);
    expect(b.parent_links).toEqual([{ parent_uuid: parent.uuid, contribution_percent: 100 }]);
    await checkin(t.admin, { goal_uuid: a.uuid, value: 100 });
    await checkin(t.admin, { goal_uuid: b.uuid, value: 0 });
    expect((await goalNow(t.admin, parent)).current_progress).toBe(20); // (100*25 + 0*100) / 125
    // re-weighting a kept link through an update brings the parent up to date
    const upd = await goalApi(t.admin).update('key_results', b.uuid, { parents: [{ parent_uuid: parent.uuid, contribution_percent: 75 }] });
    expect(upd.status).toBe(200);
    expect(upd.body.data.record.parent_links).toEqual([{ parent_uuid: parent.uuid, contribution_percent: 75 }]);
    expect((await goalNow(t.admin, parent)).current_progress).toBe(25); // (100*25 + 0*75) / 100
    // a plain uuid keeps the link's weight; a weight outside 0..100 is refused
    expect(
      (await goalApi(t.admin).update('key_results', b.uuid, { parents: [parent.uuid] })).body.data.record.parent_links[0]
        .contribution_percent,
    ).toBe(75);
    expect(
      (await goalApi(t.admin).update('key_results', b.uuid, { parents: [{ parent_uuid: parent.uuid, contribution_percent: 150 }] })).status,
    ).toBe(422);
  });
});
