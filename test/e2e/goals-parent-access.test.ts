import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, type TenantFixture } from '../support/api.ts';
import { goal, goalTenant, P, type GoalTenant } from './goals.fixture.ts';

/**
 * Contract 5 (issue 10 section 5): placing a goal under a parent needs the right to update the parent;
 * removing a link needs the right to update the child; parent_links and path name only visible parents.
 */
describe('parent links and roles', () => {
  let g: GoalTenant;
  let member: Awaited<ReturnType<TenantFixture['user']>>;
  let viewer: Awaited<ReturnType<TenantFixture['user']>>;
  let adminsPublic: any;
  let adminsLimited: any;
  beforeAll(async () => {
    g = await goalTenant();
    [member, viewer] = await Promise.all([g.t.user(), g.t.user({ role: 'viewer' })]);
    [adminsPublic, adminsLimited] = await Promise.all([
      goal(g.t.admin, 'objectives', { title: 'admin public', time_period_uuid: g.period.uuid }),
      goal(g.t.admin, 'objectives', { title: 'admin limited', time_period_uuid: g.period.uuid, visibility: 'limited' }),
    ]);
  });

  it('member: cannot place its goal under a parent it cannot update (403, on create and on update), can under its own', async () => {
    const base = { time_period_uuid: g.period.uuid };
    expectError(await member.api.post(P('key_results'), { ...base, title: 'under admin', parents: [adminsPublic.uuid] }), 403, 'forbidden');
    const mine = await goal(member.api, 'key_results', { ...base, title: 'mine' });
    expectError(await member.api.put(P('key_results', mine.uuid), { parents: [adminsPublic.uuid] }), 403, 'forbidden');
    expect((await g.t.admin.get(P('key_results', mine.uuid))).body.data.record.parent_links).toEqual([]);
    // a parent it cannot see reads as unknown (422), not 403: its existence is not revealed
    expectError(await member.api.put(P('key_results', mine.uuid), { parents: [adminsLimited.uuid] }), 422, 'validation_failed');
    const ownParent = await goal(member.api, 'objectives', { ...base, title: 'own parent' });
    const placed = await member.api.put(P('key_results', mine.uuid), { parents: [ownParent.uuid] });
    expect(placed.status).toBe(200);
    expect(placed.body.data.record.parent_links).toEqual([{ parent_uuid: ownParent.uuid, contribution_percent: 100 }]);
    // granted edit on the admin's goal, the member may place under it
    await g.t.admin.put(P('objectives', adminsPublic.uuid), {
      visible_entities: [{ entity_type: 'user', entity_uuid: member.uuid, mode: 'edit' }],
    });
    expect((await member.api.put(P('key_results', mine.uuid), { parents: [ownParent.uuid, adminsPublic.uuid] })).status).toBe(200);
  });

  it('removing a link needs the right to update the child, not the parent', async () => {
    const base = { time_period_uuid: g.period.uuid };
    const parent = await goal(member.api, 'objectives', { ...base, title: "member's parent" });
    const adminChild = await goal(g.t.admin, 'key_results', { ...base, title: 'admin child', parents: [parent.uuid] });
    // the member owns the parent but not the child: it cannot unlink it
    expectError(await member.api.put(P('key_results', adminChild.uuid), { parents: [] }), 403, 'forbidden');
    const memberChild = await goal(member.api, 'key_results', { ...base, title: 'member child', parents: [adminsPublic.uuid] });
    // ...but may unlink its own child from a parent it cannot update
    const unlinked = await member.api.put(P('key_results', memberChild.uuid), { parents: [] });
    expect(unlinked.status).toBe(200);
    expect(unlinked.body.data.record.parent_links).toEqual([]);
  });

  it('viewer: writes no links at all (403)', async () => {
    expectError(
      await viewer.api.post(P('key_results'), { time_period_uuid: g.period.uuid, title: 'v', parents: [adminsPublic.uuid] }),
      403,
      'forbidden',
    );
  });

  it('admin: places any goal under any parent; parent_links and path hide parents the caller cannot see', async () => {
    const base = { time_period_uuid: g.period.uuid };
    // a visible child (public) under a limited parent under a public root
    const mid = await goal(g.t.admin, 'objectives', { ...base, title: 'limited mid', visibility: 'limited', parents: [adminsPublic.uuid] });
    const child = await goal(g.t.admin, 'key_results', { ...base, title: 'public child', parents: [mid.uuid, adminsPublic.uuid] });
    expect(child.path).toBe(`${adminsPublic.uuid}/${mid.uuid}/${child.uuid}`);
    const asAdmin = (await g.t.admin.get(P('key_results', child.uuid))).body.data.record;
    expect(asAdmin.parent_links.map((l: any) => l.parent_uuid)).toEqual([mid.uuid, adminsPublic.uuid]);
    for (const api of [member.api, viewer.api]) {
      const seen = (await api.get(P('key_results', child.uuid))).body.data.record;
      expect(seen.parent_links.map((l: any) => l.parent_uuid)).toEqual([adminsPublic.uuid]);
      expect(seen.path).toBe(child.uuid); // the line above the hidden parent is not named either
      const listed = (await api.get(`${P('key_results')}?q[uuid_eq]=${child.uuid}`)).body.data.records[0];
      expect(listed.parent_links.map((l: any) => l.parent_uuid)).toEqual([adminsPublic.uuid]);
      expect(JSON.stringify(listed)).not.toContain(mid.uuid);
    }
  });
});
