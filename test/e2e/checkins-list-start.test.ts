import { describe, expect, it } from 'vitest';
import { expectError } from '../support/api.ts';
import { CHECKINS, checkin } from './checkins.fixture.ts';
import { goal, goalApi, goalTenant, sorted, uuids } from './goals.fixture.ts';

/**
 * GET /checkins starts its first keys beside the caller's read (apiHandler `early`): whether the check-ins'
 * goals are read to judge them is decided once the caller is known (an admin's are not).
 */
const rt = (res: { headers: Headers }) => Number(res.headers.get('x-db-round-trips'));

describe('check-in list, started beside the caller', () => {
  it('an admin page is the caller beside the first keys, then the check-ins; a member sees only check-ins of goals it may see', async () => {
    const { t, period } = await goalTenant();
    const member = await t.user();
    const open = await goal(t.admin, 'objectives', { title: 'open', time_period_uuid: period.uuid });
    const hidden = await goal(t.admin, 'objectives', { title: 'hidden', time_period_uuid: period.uuid, visibility: 'limited' });
    const made = { open: [] as string[], hidden: [] as string[] };
    for (let i = 0; i < 2; i++) {
      made.open.push((await checkin(t.admin, { goal_uuid: open.uuid, value: i })).uuid);
      made.hidden.push((await checkin(t.admin, { goal_uuid: hidden.uuid, value: i })).uuid);
    }
    const byAdmin = await t.admin.get(CHECKINS);
    expect(sorted(uuids(byAdmin.body.data.records))).toEqual(sorted([...made.open, ...made.hidden]));
    expect(rt(byAdmin)).toBe(2);
    const byMember = await member.api.get(CHECKINS);
    expect(sorted(uuids(byMember.body.data.records))).toEqual(sorted(made.open));
    // the member is let in on the goal: its check-ins show at once
    await goalApi(t.admin).update('objectives', hidden.uuid, {
      visible_entities: [{ entity_type: 'user', entity_uuid: member.uuid, mode: 'view' }],
    });
    expect(sorted(uuids((await member.api.get(CHECKINS)).body.data.records))).toEqual(sorted([...made.open, ...made.hidden]));
  });

  it('a page of 20 whose check-ins all fall in one of the list shards is still at most 3 round trips, in creation order', async () => {
    const { t, period } = await goalTenant();
    const busy = await goal(t.admin, 'objectives', { title: 'busy', time_period_uuid: period.uuid });
    const made: string[] = [];
    // one goal's check-ins share its list shard: the first 21 keys (the page and the one telling `next`) all come from it
    for (let i = 0; i < 24; i++) made.push((await checkin(t.admin, { goal_uuid: busy.uuid, value: i })).uuid);
    const others = await Promise.all(['a', 'b', 'c'].map((title) => goal(t.admin, 'objectives', { title, time_period_uuid: period.uuid })));
    for (const o of others) made.push((await checkin(t.admin, { goal_uuid: o.uuid, value: 1 })).uuid);
    const page1 = await t.admin.get(`${CHECKINS}?per_page=20`);
    expect(uuids(page1.body.data.records)).toEqual(made.slice(0, 20));
    expect(page1.body.data.pagy.next).toBe(2);
    // the caller beside every shard's first Query, one follow-up of the busy shard, then the check-ins
    expect(rt(page1)).toBeLessThanOrEqual(3);
    const page2 = await t.admin.get(`${CHECKINS}?per_page=20&page=2`);
    expect(uuids(page2.body.data.records)).toEqual(made.slice(20));
    expect(page2.body.data.pagy.next).toBeNull();
  });

  it('a refused caller wins over anything the list found wrong meanwhile (401 before 400)', async () => {
    const { t } = await goalTenant();
    const member = await t.user();
    expectError(await member.api.get(`${CHECKINS}?q[colour_eq]=red`), 400);
    expect((await t.admin.put(`/rest/v2/users/${member.uuid}`, { user: { status: 'inactive' } })).status).toBe(200);
    for (const query of ['?q[colour_eq]=red', '', '?count=true'])
      expectError(await member.api.get(`${CHECKINS}${query}`), 401, 'unauthorized');
  });
});
