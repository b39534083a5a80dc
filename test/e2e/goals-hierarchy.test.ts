import { beforeAll, describe, expect, it } from 'vitest';
import { createGoal } from '#shared/domain/goals/create.ts';
import { expectError, listAll, type TenantFixture } from '../support/api.ts';
import { countingCtx, goal, goalTenant, P, sorted, uuids, type GoalTenant, type KindPath, goalApi } from './goals.fixture.ts';

describe('goals: parents, cycles, path, soft delete with hierarchy, archive', () => {
  let g: GoalTenant;
  let t: TenantFixture;
  const mk = (kind: KindPath, title: string, parents: string[] = [], extra: Record<string, unknown> = {}) =>
    goal(t.admin, kind, { title, time_period_uuid: g.period.uuid, parents, ...extra });
  const get = async (kind: KindPath, id: string) => (await goalApi(t.admin).get(kind, id)).body.data.record;
  beforeAll(async () => {
    g = await goalTenant();
    t = g.t;
  });

  it('links parents of any kind, refuses itself, descendants (cycles), unknown and deleted parents', async () => {
    const a = await mk('objectives', 'A');
    const b = await mk('key_results', 'B', [a.uuid]);
    const c = await mk('initiatives', 'C', [b.uuid]);
    expect(c.parent_links).toEqual([{ parent_uuid: b.uuid, contribution_percent: 100 }]);

    const self = expectError(await goalApi(t.admin).update('objectives', a.uuid, { parents: [a.uuid] }), 422, 'validation_failed');
    expect(self.details[0]).toMatchObject({ field: 'parents', code: 'cycle' });
    for (const below of [b.uuid, c.uuid]) {
      const e = expectError(await goalApi(t.admin).update('objectives', a.uuid, { parents: [below] }), 422, 'validation_failed');
      expect(e.details[0]).toMatchObject({ field: 'parents', code: 'cycle', message: expect.stringContaining(below) });
    }
    expect((await get('objectives', a.uuid)).parent_links).toEqual([]);
    const unknown = expectError(
      await goalApi(t.admin).update('objectives', a.uuid, { parents: ['00000000-0000-4000-8000-000000000000'] }),
      422,
      'validation_failed',
    );
    expect(unknown.details[0]).toMatchObject({ field: 'parents', code: 'not_found' });

    // two parents; keeping one and adding another keeps the first link
    const d = await mk('objectives', 'D');
    const two = (await goalApi(t.admin).update('initiatives', c.uuid, { parents: [b.uuid, d.uuid] })).body.data.record;
    expect(two.parent_links).toEqual([
      { parent_uuid: b.uuid, contribution_percent: 100 },
      { parent_uuid: d.uuid, contribution_percent: 100 },
    ]);
    const none = (await goalApi(t.admin).update('initiatives', c.uuid, { parents: null })).body.data.record;
    expect(none.parent_links).toEqual([]);

    const gone = await mk('objectives', 'Gone');
    await goalApi(t.admin).remove('objectives', gone.uuid);
    const deleted = expectError(
      await goalApi(t.admin).create('key_results', { title: 'x', time_period_uuid: g.period.uuid, parents: [gone.uuid] }),
      422,
      'validation_failed',
    );
    expect(deleted.details[0]).toMatchObject({ field: 'parents', code: 'discarded' });
  });

  it('refuses a two-goal cycle even when both links are written at the same time', async () => {
    for (let round = 0; round < 3; round++) {
      const x = await mk('objectives', `X${round}`);
      const y = await mk('objectives', `Y${round}`);
      const [rx, ry] = await Promise.all([
        goalApi(t.admin).update('objectives', x.uuid, { parents: [y.uuid] }),
        goalApi(t.admin).update('objectives', y.uuid, { parents: [x.uuid] }),
      ]);
      expect([rx.status, ry.status].sort()).toEqual([200, 422]);
    }
  });

  it('refuses a new goal under a parent deleted while the create was in flight (the parent is checked in its transaction)', async () => {
    const parent = await mk('objectives', 'Deleted meanwhile');
    const { ctx } = await countingCtx(t, t.adminUuid, {
      beforeTransact: async (n) => {
        if (n === 0) expect((await goalApi(t.admin).remove('objectives', parent.uuid)).status).toBe(200);
      },
    });
    await expect(
      createGoal(ctx, 'key_result', { title: 'orphan', time_period_uuid: g.period.uuid, parents: [parent.uuid] }),
    ).rejects.toMatchObject({
      status: 422,
      details: [expect.objectContaining({ field: 'parents', code: 'discarded' })],
    });
    expect(await listAll(t.admin, `${P('key_results')}?q[links_as_child_ancestor_uuid_eq]=${parent.uuid}&q[discarded_at_null]=1`)).toEqual(
      [],
    );
  });

  it('keeps path (first-parent uuid chain) true for the whole subtree when a goal moves', async () => {
    const root1 = await mk('objectives', 'root1');
    const root2 = await mk('objectives', 'root2');
    const mid = await mk('objectives', 'mid', [root1.uuid]);
    const leaf = await mk('key_results', 'leaf', [mid.uuid]);
    const side = await mk('initiatives', 'side', [root2.uuid, leaf.uuid]); // first parent elsewhere: not under mid's line
    expect(leaf.path).toBe(`${root1.uuid}/${mid.uuid}/${leaf.uuid}`);
    const moved = (await goalApi(t.admin).update('objectives', mid.uuid, { parents: [root2.uuid] })).body.data.record;
    expect(moved.path).toBe(`${root2.uuid}/${mid.uuid}`);
    expect((await get('key_results', leaf.uuid)).path).toBe(`${root2.uuid}/${mid.uuid}/${leaf.uuid}`);
    expect((await get('initiatives', side.uuid)).path).toBe(`${root2.uuid}/${side.uuid}`);
    const subtree = await listAll(t.admin, `${P('key_results')}?q[path_start]=${root2.uuid}/${mid.uuid}`);
    expect(uuids(subtree)).toEqual([leaf.uuid]);
  });

  it('delete is a soft delete: flat record back, 200 on get, out of lists unless discarded_at is filtered, read-only', async () => {
    const o = await mk('objectives', 'To delete');
    const res = await goalApi(t.admin).remove('objectives', o.uuid);
    expect(res.status).toBe(200);
    expect(res.body.uuid).toBe(o.uuid);
    expect('data' in res.body).toBe(false);
    expect(res.body).toMatchObject({ discarded_at: expect.any(String), discarded_by_uuid: t.adminUuid, title: 'To delete' });
    const got = await goalApi(t.admin).get('objectives', o.uuid);
    expect(got.status).toBe(200);
    expect(got.body.data.record.discarded_at).toBe(res.body.discarded_at);
    expect(got.body.data.checks).toEqual({ can_update: false, can_delete: false, can_checkin: false, can_archive: false });
    expect(uuids(await listAll(t.admin, P('objectives')))).not.toContain(o.uuid);
    expect(uuids(await listAll(t.admin, `${P('objectives')}?q[discarded_at_not_null]=1`))).toContain(o.uuid);
    expect(uuids(await listAll(t.admin, `${P('objectives')}?q[discarded_at_null]=true`))).not.toContain(o.uuid);
    expect(uuids(await listAll(t.admin, `${P('objectives')}?q[title_eq]=To%20delete`))).toEqual([]);
    expectError(await goalApi(t.admin).update('objectives', o.uuid, { title: 'x' }), 422, 'validation_failed');
    expectError(await goalApi(t.admin).archive('objectives', o.uuid), 422, 'validation_failed');
    // deleting again changes nothing
    const again = await goalApi(t.admin).remove('objectives', o.uuid);
    expect(again.status).toBe(200);
    expect(again.body.discarded_at).toBe(res.body.discarded_at);
  });

  /** O → { O2 → { K2 }, K, I } */
  async function tree(tag: string) {
    const o = await mk('objectives', `${tag} O`);
    const o2 = await mk('objectives', `${tag} O2`, [o.uuid]);
    const k = await mk('key_results', `${tag} K`, [o.uuid]);
    const i = await mk('initiatives', `${tag} I`, [o.uuid]);
    const k2 = await mk('key_results', `${tag} K2`, [o2.uuid]);
    return { o, o2, k, i, k2 };
  }
  const discarded = async (kind: KindPath, id: string) => (await get(kind, id)).discarded_at !== null;

  it('including_immediate_<kind> discards the direct children of that kind only', async () => {
    const krs = await tree('krs');
    expect((await goalApi(t.admin).remove('objectives', krs.o.uuid, { including_immediate_key_results: true })).status).toBe(200);
    expect([
      await discarded('objectives', krs.o.uuid),
      await discarded('key_results', krs.k.uuid),
      await discarded('objectives', krs.o2.uuid),
      await discarded('initiatives', krs.i.uuid),
      await discarded('key_results', krs.k2.uuid),
    ]).toEqual([true, true, false, false, false]);

    const objs = await tree('objs');
    await goalApi(t.admin).remove('objectives', objs.o.uuid, {
      including_immediate_objectives: true,
      including_immediate_initiatives: true,
    });
    expect([
      await discarded('objectives', objs.o2.uuid),
      await discarded('initiatives', objs.i.uuid),
      await discarded('key_results', objs.k.uuid),
      await discarded('key_results', objs.k2.uuid),
    ]).toEqual([true, true, false, false]);

    const none = await tree('none');
    await goalApi(t.admin).remove('objectives', none.o.uuid, {});
    expect([
      await discarded('objectives', none.o.uuid),
      await discarded('objectives', none.o2.uuid),
      await discarded('key_results', none.k.uuid),
    ]).toEqual([true, false, false]);
    // the children stay listed, still linked to their deleted parent
    expect(uuids(await listAll(t.admin, `${P('key_results')}?q[links_as_child_ancestor_uuid_eq]=${none.o.uuid}`))).toEqual([none.k.uuid]);
  });

  it('delete_hierarchy discards every descendant, all kinds, any depth; on a key result too', async () => {
    const all = await tree('all');
    await goalApi(t.admin).remove('objectives', all.o.uuid, { delete_hierarchy: true });
    for (const [kind, x] of [
      ['objectives', all.o2],
      ['key_results', all.k],
      ['initiatives', all.i],
      ['key_results', all.k2],
    ] as const) {
      expect(await discarded(kind, x.uuid)).toBe(true);
    }
    expect(uuids(await listAll(t.admin, `${P('key_results')}?q[ancestors_uuid_eq]=${all.o.uuid}`))).toEqual([]);
    expect(
      sorted(uuids(await listAll(t.admin, `${P('key_results')}?q[ancestors_uuid_eq]=${all.o.uuid}&q[discarded_at_not_null]=1`))),
    ).toEqual(sorted([all.k.uuid, all.k2.uuid]));

    const kr = await mk('key_results', 'KR parent');
    const ini = await mk('initiatives', 'KR child', [kr.uuid]);
    await goalApi(t.admin).remove('key_results', kr.uuid, { delete_hierarchy: true });
    expect(await discarded('initiatives', ini.uuid)).toBe(true);
  });

  it('a hierarchy too large for one transaction is refused whole (422 too_many), nothing deleted', async () => {
    const big = await mk('objectives', 'Big');
    const kids = [];
    for (let i = 0; i < 30; i++) kids.push(await mk('key_results', `kid ${i}`, [big.uuid]));
    const e = expectError(
      await goalApi(t.admin).remove('objectives', big.uuid, { including_immediate_key_results: true }),
      422,
      'validation_failed',
    );
    expect(e.details[0]).toMatchObject({ field: 'including_immediate_key_results', code: 'too_many' });
    expect(await discarded('objectives', big.uuid)).toBe(false);
    expect(await discarded('key_results', kids[0].uuid)).toBe(false);
    // without the children it goes through
    expect((await goalApi(t.admin).remove('objectives', big.uuid)).status).toBe(200);
  });

  it('a member deletes a hierarchy only when allowed to change every goal in it (403 otherwise, nothing deleted)', async () => {
    const m = await t.user();
    const parent = await goal(m.api, 'objectives', { title: 'member parent', time_period_uuid: g.period.uuid });
    const foreignChild = await mk('key_results', 'admin child', [parent.uuid]);
    expectError(await goalApi(m.api).remove('objectives', parent.uuid, { delete_hierarchy: true }), 403, 'forbidden');
    expect(await discarded('objectives', parent.uuid)).toBe(false);
    expect(await discarded('key_results', foreignChild.uuid)).toBe(false);
    await goalApi(t.admin).update('key_results', foreignChild.uuid, { owner_uuids: [m.uuid] });
    expect((await goalApi(m.api).remove('objectives', parent.uuid, { delete_hierarchy: true })).status).toBe(200);
    expect(await discarded('key_results', foreignChild.uuid)).toBe(true);
  });

  it('a rollup parent leaves out deleted and archived children', async () => {
    const parent = await mk('objectives', 'Rollup parent');
    const a = await mk('key_results', 'a', [parent.uuid]);
    const b = await mk('key_results', 'b', [parent.uuid]);
    const r = (await goalApi(t.admin).update('objectives', parent.uuid, { progress_mode: 'rollup' })).body.data.record;
    expect(r.current_progress).toBe(0); // two children without progress count as 0
    await goalApi(t.admin).archive('key_results', a.uuid);
    await goalApi(t.admin).remove('key_results', b.uuid);
    expect((await get('objectives', parent.uuid)).current_progress).toBeNull(); // no counted child left
    await goalApi(t.admin).unarchive('key_results', a.uuid);
    expect((await get('objectives', parent.uuid)).current_progress).toBe(0);
  });
});
