import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, listAll, newTenant, type Api, type TenantFixture } from '../support/api.ts';
import { RACE_TIMEOUT_MS } from './trees.fixture.ts';

type User = Awaited<ReturnType<TenantFixture['user']>>;

/** Creates a team as `api` (default: the tenant admin) and returns its record. */
async function mkTeam(api: Api, body: Record<string, unknown>): Promise<any> {
  const res = await api.post('/rest/v2/teams', { name: `Team ${randomUUID().slice(0, 6)}`, ...body });
  if (res.status !== 201) throw new Error(`team create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.record;
}

const ids = (records: any[]) => records.map((r) => r.uuid);
const depthOf = async (api: Api, id: string) => (await api.get(`/rest/v2/teams/${id}`)).body.data.record.depth;

describe('teams', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  let owner: User;
  let member: User;
  let viewer: User;
  beforeAll(async () => {
    [t, other] = await Promise.all([newTenant(), newTenant()]);
    [owner, member, viewer] = await Promise.all([t.user({ role: 'member' }), t.user({ role: 'member' }), t.user({ role: 'viewer' })]);
  });

  it('creates, gets, lists and updates a team with every record field', async () => {
    const res = await t.admin.post('/rest/v2/teams', {
      name: 'Platform',
      owner_uuids: [owner.uuid],
      member_uuids: [member.uuid, owner.uuid, member.uuid],
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ type: 'team', access_source: 'admin', checks: { can_update: true, can_delete: true } });
    const rec = res.body.data.record;
    expect(Object.keys(rec).sort()).toEqual(
      [
        'uuid',
        'name',
        'display_name',
        'parent_uuid',
        'owner_uuids',
        'member_uuids',
        'status',
        'is_org',
        'depth',
        'creator_uuid',
        'team_memberships',
        'created_at',
        'updated_at',
      ].sort(),
    );
    expect(rec).toMatchObject({
      name: 'Platform',
      display_name: 'Platform',
      parent_uuid: null,
      owner_uuids: [owner.uuid],
      member_uuids: [member.uuid, owner.uuid],
      status: 'active',
      is_org: false,
      depth: 0,
      creator_uuid: t.adminUuid,
    });
    // one membership per user; an owner listed as member too is one membership with role owner
    expect(rec.team_memberships).toHaveLength(2);
    expect(rec.team_memberships).toEqual(
      expect.arrayContaining([
        { uuid: expect.any(String), team_uuid: rec.uuid, user_uuid: owner.uuid, role: 'owner' },
        { uuid: expect.any(String), team_uuid: rec.uuid, user_uuid: member.uuid, role: 'member' },
      ]),
    );

    const got = await t.admin.get(`/rest/v2/teams/${rec.uuid}`);
    expect(got.status).toBe(200);
    expect(got.body.data.record).toEqual(rec);
    const listed = await listAll(t.admin, `/rest/v2/teams?q[uuid_eq]=${rec.uuid}`);
    expect(listed).toEqual([rec]);

    const upd = await t.admin.put(`/rest/v2/teams/${rec.uuid}`, { display_name: 'Platform Eng', is_org: true, member_uuids: [] });
    expect(upd.status).toBe(200);
    expect(upd.body.data.record).toMatchObject({
      name: 'Platform',
      display_name: 'Platform Eng',
      is_org: true,
      member_uuids: [],
      owner_uuids: [owner.uuid],
    });
    expect(upd.body.data.record.team_memberships).toEqual([expect.objectContaining({ user_uuid: owner.uuid, role: 'owner' })]);
    expect(upd.body.data.record.updated_at >= rec.updated_at).toBe(true);
    expect(upd.body.data.record.created_at).toBe(rec.created_at);
  });

  it('answers 400 for unknown fields, wrong types, a missing name and bad JSON; 422 for rule breaks', async () => {
    for (const field of ['tenant_uuid', 'uuid', 'depth', 'creator_uuid']) {
      const e = expectError(await t.admin.post('/rest/v2/teams', { name: 'x', [field]: 'x' }), 400, 'bad_request');
      expect(e.details.map((d) => d.field)).toContain(field);
    }
    const team = await mkTeam(t.admin, {});
    const unknownOnUpdate = expectError(await t.admin.put(`/rest/v2/teams/${team.uuid}`, { team_memberships: [] }), 400, 'bad_request');
    expect(unknownOnUpdate.details.map((d) => d.field)).toContain('team_memberships');
    expectError(await t.admin.post('/rest/v2/teams', { name: 42 }), 400, 'bad_request');
    expectError(await t.admin.post('/rest/v2/teams', { name: 'x', is_org: 'yes' }), 400, 'bad_request');
    expectError(await t.admin.post('/rest/v2/teams', { name: 'x', owner_uuids: owner.uuid }), 400, 'bad_request');
    expectError(await t.admin.post('/rest/v2/teams', { name: 'x', member_uuids: [1] }), 400, 'bad_request');
    expectError(await t.admin.put(`/rest/v2/teams/${team.uuid}`, { parent_uuid: 7 }), 400, 'bad_request');
    expectError(await t.admin.post('/rest/v2/teams', {}), 400, 'bad_request');
    expectError(await t.admin.request('POST', '/rest/v2/teams', '{nope', { 'content-type': 'application/json' }), 400, 'bad_request');
    expectError(await t.admin.post('/rest/v2/teams', { name: '   ' }), 422, 'validation_failed');
    expectError(await t.admin.post('/rest/v2/teams', { name: 'x', status: 'deleted' }), 422, 'validation_failed');
    expectError(await t.admin.post('/rest/v2/teams', { name: 'x', parent_uuid: 'not-a-uuid' }), 422, 'validation_failed');
    // nothing of the refused writes was stored
    expect(await listAll(t.admin, '/rest/v2/teams?q[name_eq]=x')).toEqual([]);
  });

  it('owners and members must be users of the tenant; the parent a team of the tenant (422 naming the uuid)', async () => {
    const ghost = randomUUID();
    const e1 = expectError(
      await t.admin.post('/rest/v2/teams', { name: 'bad users', owner_uuids: [owner.uuid, ghost], member_uuids: [other.adminUuid] }),
      422,
      'validation_failed',
    );
    expect(e1.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'owner_uuids', code: 'not_found', message: expect.stringContaining(ghost) }),
        expect.objectContaining({ field: 'member_uuids', code: 'not_found', message: expect.stringContaining(other.adminUuid) }),
      ]),
    );
    expect(e1.details.some((d) => d.message.includes(owner.uuid))).toBe(false);
    const foreign = await mkTeam(other.admin, {});
    const e2 = expectError(
      await t.admin.post('/rest/v2/teams', { name: 'bad parent', parent_uuid: foreign.uuid }),
      422,
      'validation_failed',
    );
    expect(e2.details[0]).toMatchObject({ field: 'parent_uuid', code: 'not_found' });
    const team = await mkTeam(t.admin, {});
    expectError(await t.admin.put(`/rest/v2/teams/${team.uuid}`, { parent_uuid: randomUUID() }), 422, 'validation_failed');
    expectError(await t.admin.put(`/rest/v2/teams/${team.uuid}`, { member_uuids: [ghost] }), 422, 'validation_failed');
    expect(await listAll(t.admin, '/rest/v2/teams?q[name_in]=bad users,bad parent')).toEqual([]);
  });

  it('isolates tenants: another tenant’s team, or no team at all, is 404', async () => {
    const foreign = await mkTeam(other.admin, { owner_uuids: [other.adminUuid] });
    for (const id of [foreign.uuid, randomUUID(), 'not-a-uuid']) {
      expectError(await t.admin.get(`/rest/v2/teams/${id}`), 404, 'not_found');
      expectError(await t.admin.put(`/rest/v2/teams/${id}`, { name: 'hijack' }), 404, 'not_found');
      expectError(await t.admin.delete(`/rest/v2/teams/${id}`), 404, 'not_found');
    }
    expect(ids(await listAll(t.admin, '/rest/v2/teams'))).not.toContain(foreign.uuid);
    expect(await listAll(t.admin, `/rest/v2/teams?q[uuid_eq]=${foreign.uuid}`)).toEqual([]);
    expect(await listAll(t.admin, `/rest/v2/teams?q[team_memberships_user_uuid_eq]=${other.adminUuid}`)).toEqual([]);
    expect((await other.admin.get(`/rest/v2/teams/${foreign.uuid}`)).body.data.record.name).toBe(foreign.name);
  });

  it('admins write; an owner updates but neither moves nor deletes; other members and viewers write nothing', async () => {
    const parent = await mkTeam(t.admin, {});
    const elsewhere = await mkTeam(t.admin, {});
    const team = await mkTeam(t.admin, { parent_uuid: parent.uuid, owner_uuids: [owner.uuid, viewer.uuid] });

    // creating: admins only
    expectError(await owner.api.post('/rest/v2/teams', { name: 'mine' }), 403, 'forbidden');
    expectError(await viewer.api.post('/rest/v2/teams', { name: 'mine' }), 403, 'forbidden');
    expect((await owner.api.get('/rest/v2/teams')).body.data.checks).toEqual({ can_create: false });
    expect((await t.admin.get('/rest/v2/teams')).body.data.checks).toEqual({ can_create: true });

    // an owner (member role): attributes, owners and members; the same parent sent back is not a move
    const asOwner = await owner.api.get(`/rest/v2/teams/${team.uuid}`);
    expect(asOwner.body.data).toMatchObject({ access_source: 'owner', checks: { can_update: true, can_delete: false } });
    const upd = await owner.api.put(`/rest/v2/teams/${team.uuid}`, {
      display_name: 'Owned',
      member_uuids: [member.uuid],
      owner_uuids: [owner.uuid, viewer.uuid],
      status: 'active',
      parent_uuid: parent.uuid,
    });
    expect(upd.status).toBe(200);
    expect(upd.body.data.record).toMatchObject({ display_name: 'Owned', member_uuids: [member.uuid], parent_uuid: parent.uuid, depth: 1 });
    expectError(await owner.api.put(`/rest/v2/teams/${team.uuid}`, { parent_uuid: elsewhere.uuid }), 403, 'forbidden');
    expectError(await owner.api.put(`/rest/v2/teams/${team.uuid}`, { parent_uuid: null }), 403, 'forbidden');
    expectError(await owner.api.delete(`/rest/v2/teams/${team.uuid}`), 403, 'forbidden');

    // a member who does not own it, and a viewer even though an owner
    const asMember = await member.api.get(`/rest/v2/teams/${team.uuid}`);
    expect(asMember.body.data).toMatchObject({ access_source: 'public', checks: { can_update: false, can_delete: false } });
    expectError(await member.api.put(`/rest/v2/teams/${team.uuid}`, { display_name: 'x' }), 403, 'forbidden');
    expectError(await member.api.delete(`/rest/v2/teams/${team.uuid}`), 403, 'forbidden');
    const asViewer = await viewer.api.get(`/rest/v2/teams/${team.uuid}`);
    expect(asViewer.status).toBe(200);
    expect(asViewer.body.data).toMatchObject({ access_source: 'owner', checks: { can_update: false, can_delete: false } });
    expectError(await viewer.api.put(`/rest/v2/teams/${team.uuid}`, { display_name: 'x' }), 403, 'forbidden');
    expectError(await viewer.api.delete(`/rest/v2/teams/${team.uuid}`), 403, 'forbidden');
    expect((await viewer.api.get(`/rest/v2/teams?q[uuid_eq]=${team.uuid}`)).body.data.records).toHaveLength(1);

    // nothing refused was written; an owner that removes itself loses the right
    const now = (await t.admin.get(`/rest/v2/teams/${team.uuid}`)).body.data.record;
    expect(now).toMatchObject({ display_name: 'Owned', parent_uuid: parent.uuid });
    expect((await owner.api.put(`/rest/v2/teams/${team.uuid}`, { owner_uuids: [viewer.uuid] })).status).toBe(200);
    expectError(await owner.api.put(`/rest/v2/teams/${team.uuid}`, { display_name: 'again' }), 403, 'forbidden');
    // admins move and delete
    expect((await t.admin.put(`/rest/v2/teams/${team.uuid}`, { parent_uuid: elsewhere.uuid })).body.data.record.parent_uuid).toBe(
      elsewhere.uuid,
    );
    expect((await t.admin.delete(`/rest/v2/teams/${team.uuid}`)).status).toBe(200);
  });

  it('maintains depth through a re-parent of a 3-level tree, and refuses cycles', async () => {
    const x = await mkTeam(t.admin, {});
    const a = await mkTeam(t.admin, {});
    const b = await mkTeam(t.admin, { parent_uuid: a.uuid });
    const c = await mkTeam(t.admin, { parent_uuid: b.uuid });
    const c2 = await mkTeam(t.admin, { parent_uuid: b.uuid, status: 'archived' });
    expect([a.depth, b.depth, c.depth, c2.depth]).toEqual([0, 1, 2, 2]);

    // a under x: the whole subtree goes one level down
    const moved = await t.admin.put(`/rest/v2/teams/${a.uuid}`, { parent_uuid: x.uuid });
    expect(moved.status).toBe(200);
    expect(moved.body.data.record).toMatchObject({ parent_uuid: x.uuid, depth: 1 });
    expect(await Promise.all([x, a, b, c, c2].map((s) => depthOf(t.admin, s.uuid)))).toEqual([0, 1, 2, 3, 3]);

    // b to the root: b's subtree goes up two levels, a stays
    expect((await t.admin.put(`/rest/v2/teams/${b.uuid}`, { parent_uuid: null })).body.data.record).toMatchObject({
      parent_uuid: null,
      depth: 0,
    });
    expect(await Promise.all([a, b, c, c2].map((s) => depthOf(t.admin, s.uuid)))).toEqual([1, 0, 1, 1]);

    // b back under a: down two levels
    expect((await t.admin.put(`/rest/v2/teams/${b.uuid}`, { parent_uuid: a.uuid })).body.data.record.depth).toBe(2);
    expect(await Promise.all([c, c2].map((s) => depthOf(t.admin, s.uuid)))).toEqual([3, 3]);

    // cycles: itself, its child, its grandchild
    for (const target of [a, b, c]) {
      const e = expectError(await t.admin.put(`/rest/v2/teams/${a.uuid}`, { parent_uuid: target.uuid }), 422, 'validation_failed');
      expect(e.details[0]).toMatchObject({ field: 'parent_uuid', code: 'cycle' });
    }
    expect((await t.admin.get(`/rest/v2/teams/${a.uuid}`)).body.data.record).toMatchObject({ parent_uuid: x.uuid, depth: 1 });
    expect(ids(await listAll(t.admin, `/rest/v2/teams?q[parent_uuid_eq]=${b.uuid}`))).toEqual([c.uuid, c2.uuid]);
  });

  it(
    'never stores a cycle under concurrent moves (many rounds), and depths stay true',
    async () => {
      for (let round = 0; round < 20; round++) {
        const [a, b, c] = await Promise.all([mkTeam(t.admin, {}), mkTeam(t.admin, {}), mkTeam(t.admin, {})]);
        // a under b, b under c, c under a: at most two can commit
        const moves = [
          [a, b],
          [b, c],
          [c, a],
        ] as const;
        const results = await Promise.all(
          moves.map(([child, parent]) => t.admin.put(`/rest/v2/teams/${child.uuid}`, { parent_uuid: parent.uuid })),
        );
        for (const r of results) expect([200, 422], JSON.stringify(r.body)).toContain(r.status);
        expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(2);
        const stored = new Map<string, any>();
        for (const team of [a, b, c]) stored.set(team.uuid, (await t.admin.get(`/rest/v2/teams/${team.uuid}`)).body.data.record);
        for (const team of stored.values()) {
          const seen = new Set<string>();
          let depth = -1;
          for (let at: any = team; at; at = at.parent_uuid ? stored.get(at.parent_uuid) : undefined) {
            expect(seen.has(at.uuid), `cycle in round ${round}`).toBe(false);
            seen.add(at.uuid);
            depth++;
          }
          expect(team.depth, `depth in round ${round}`).toBe(depth);
        }
      }
    },
    RACE_TIMEOUT_MS,
  );

  it('creates sub-teams under one parent concurrently, each with the right depth', async () => {
    const root = await mkTeam(t.admin, {});
    const mid = await mkTeam(t.admin, { parent_uuid: root.uuid });
    const kids = await Promise.all(Array.from({ length: 6 }, (_, i) => mkTeam(t.admin, { name: `kid ${i}`, parent_uuid: mid.uuid })));
    expect(kids.map((k) => k.depth)).toEqual(Array(6).fill(2));
    await t.admin.put(`/rest/v2/teams/${mid.uuid}`, { parent_uuid: null });
    const after = await listAll(t.admin, `/rest/v2/teams?q[parent_uuid_eq]=${mid.uuid}`);
    expect(after.map((k) => k.depth)).toEqual(Array(6).fill(1));
  });

  it('refuses a delete while an active sub-team exists; archived sub-teams become root teams', async () => {
    const top = await mkTeam(t.admin, {});
    const doomed = await mkTeam(t.admin, { parent_uuid: top.uuid, owner_uuids: [owner.uuid], member_uuids: [member.uuid] });
    const sub = await mkTeam(t.admin, { parent_uuid: doomed.uuid });
    const subsub = await mkTeam(t.admin, { parent_uuid: sub.uuid });
    const e = expectError(await t.admin.delete(`/rest/v2/teams/${doomed.uuid}`), 422, 'has_dependents');
    expect(e.details).toEqual([expect.objectContaining({ field: 'sub_teams', message: expect.stringContaining(sub.uuid) })]);
    expect((await t.admin.get(`/rest/v2/teams/${doomed.uuid}`)).status).toBe(200);

    expect((await t.admin.put(`/rest/v2/teams/${sub.uuid}`, { status: 'archived' })).status).toBe(200);
    const del = await t.admin.delete(`/rest/v2/teams/${doomed.uuid}`);
    expect(del.status).toBe(200);
    expect(del.body.data).toMatchObject({
      type: 'team',
      access_source: 'admin',
      record: { uuid: doomed.uuid, parent_uuid: top.uuid, depth: 1, owner_uuids: [owner.uuid] },
    });
    expectError(await t.admin.get(`/rest/v2/teams/${doomed.uuid}`), 404, 'not_found');
    expectError(await t.admin.delete(`/rest/v2/teams/${doomed.uuid}`), 404, 'not_found');

    // the archived sub-team is detached with its own subtree; nothing points at the deleted team
    expect((await t.admin.get(`/rest/v2/teams/${sub.uuid}`)).body.data.record).toMatchObject({
      parent_uuid: null,
      depth: 0,
      status: 'archived',
    });
    expect(await depthOf(t.admin, subsub.uuid)).toBe(1);
    expect(await listAll(t.admin, `/rest/v2/teams?q[parent_uuid_eq]=${doomed.uuid}`)).toEqual([]);
    expect(ids(await listAll(t.admin, `/rest/v2/teams?q[team_memberships_user_uuid_eq]=${member.uuid}`))).not.toContain(doomed.uuid);
    expect(await listAll(t.admin, `/rest/v2/users?q[direct_teams_uuid_eq]=${doomed.uuid}`)).toEqual([]);
  });

  it('checks owners and members in one read; deletes a team reading its sub-teams once; refuses body fields on a delete (400)', async () => {
    const created = await t.admin.post('/rest/v2/teams', { name: 'Lone', owner_uuids: [owner.uuid], member_uuids: [member.uuid] });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-db-round-trips')).toBe('3'); // caller, owners and members, transaction
    const lone = created.body.data.record;
    const e = expectError(await t.admin.delete(`/rest/v2/teams/${lone.uuid}`, { force: true }), 400, 'bad_request');
    expect(e.details.map((d) => d.field)).toEqual(['force']);
    expect((await t.admin.get(`/rest/v2/teams/${lone.uuid}`)).status).toBe(200);
    const del = await t.admin.delete(`/rest/v2/teams/${lone.uuid}`);
    expect(del.status).toBe(200);
    // caller, team, sub-teams, goals of each of the 3 kinds (in parallel: one step), transaction
    expect(del.headers.get('x-db-round-trips')).toBe('6');
    expect(del.headers.get('x-db-calls')).toBe('7');
  });

  it('refuses writes that cannot be one atomic transaction (422 too_many)', async () => {
    const s = await newTenant();
    const many: string[] = [];
    for (let i = 0; i < 5; i++) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, () => s.admin.post('/rest/v2/users', { user: { email: `u-${randomUUID().slice(0, 8)}@example.test` } })),
      );
      many.push(...batch.map((r) => r.body.data.record.uuid));
    }
    // 50 owners who are also members: entity + 50 member entries + 50 owner entries = 101 items
    const e = expectError(
      await s.admin.post('/rest/v2/teams', { name: 'huge', owner_uuids: many, member_uuids: many }),
      422,
      'validation_failed',
    );
    expect(e.details[0]).toMatchObject({ code: 'too_many' });
    expect((await s.admin.post('/rest/v2/teams', { name: 'fits', owner_uuids: many.slice(0, 49) })).status).toBe(201);

    // a move whose subtree is over 100 teams
    const big = await mkTeam(s.admin, {});
    for (let i = 0; i < 100; i++) await mkTeam(s.admin, { parent_uuid: big.uuid });
    const dest = await mkTeam(s.admin, {});
    const m = expectError(await s.admin.put(`/rest/v2/teams/${big.uuid}`, { parent_uuid: dest.uuid }), 422, 'validation_failed');
    expect(m.details[0]).toMatchObject({ field: 'parent_uuid', code: 'too_many' });
    expect((await s.admin.get(`/rest/v2/teams/${big.uuid}`)).body.data.record).toMatchObject({ parent_uuid: null, depth: 0 });
  });

  describe('list', () => {
    let s: TenantFixture;
    let alice: User;
    let bob: User;
    let org: any;
    let eng: any;
    let web: any;
    let sales: any;
    beforeAll(async () => {
      s = await newTenant();
      [alice, bob] = await Promise.all([s.user({ display_name: 'Alice' }), s.user({ display_name: 'Bob' })]);
      org = await mkTeam(s.admin, { name: 'acme', display_name: 'ACME Corp', is_org: true, owner_uuids: [alice.uuid] });
      eng = await mkTeam(s.admin, {
        name: 'eng',
        display_name: 'Engineering',
        parent_uuid: org.uuid,
        owner_uuids: [bob.uuid],
        member_uuids: [alice.uuid],
      });
      web = await mkTeam(s.admin, { name: 'web', display_name: 'Web Platform', parent_uuid: eng.uuid, member_uuids: [bob.uuid] });
      sales = await mkTeam(s.admin, { name: 'sales', display_name: 'Sales', parent_uuid: org.uuid, status: 'archived' });
    });
    const q = async (query: string) => ids(await listAll(s.admin, `/rest/v2/teams?${query}`));

    it('filters on every attribute', async () => {
      expect(await q('')).toEqual([org.uuid, eng.uuid, web.uuid, sales.uuid]);
      expect(await q(`q[uuid_eq]=${eng.uuid}`)).toEqual([eng.uuid]);
      expect(await q(`q[uuid_in][]=${web.uuid}&q[uuid_in][]=${org.uuid}`)).toEqual([org.uuid, web.uuid]);
      expect(await q(`q[uuid_not_in]=${web.uuid},${org.uuid}`)).toEqual([eng.uuid, sales.uuid]);
      expect(await q('q[name_eq]=ENG')).toEqual([eng.uuid]);
      expect(await q('q[name_start]=s')).toEqual([sales.uuid]);
      expect(await q('q[display_name_cont]=platform')).toEqual([web.uuid]);
      expect(await q('q[display_name_end]=ing')).toEqual([eng.uuid]);
      expect(await q('q[display_name_not_cont]=a')).toEqual([eng.uuid]);
      expect(await q(`q[parent_uuid_eq]=${org.uuid}`)).toEqual([eng.uuid, sales.uuid]);
      expect(await q(`q[parent_uuid_in]=${org.uuid},${eng.uuid}`)).toEqual([eng.uuid, web.uuid, sales.uuid]);
      expect(await q('q[parent_uuid_null]=true')).toEqual([org.uuid]);
      expect(await q('q[parent_uuid_present]=1')).toEqual([eng.uuid, web.uuid, sales.uuid]);
      expect(await q(`q[parent_uuid_eq]=${org.uuid}&q[status_eq]=active`)).toEqual([eng.uuid]);
      expect(await q('q[status_eq]=archived')).toEqual([sales.uuid]);
      expect(await q('q[status_not_eq]=archived')).toEqual([org.uuid, eng.uuid, web.uuid]);
      expect(await q('q[is_org_true]=1')).toEqual([org.uuid]);
      expect(await q('q[is_org_eq]=false')).toEqual([eng.uuid, web.uuid, sales.uuid]);
      expect(await q('q[depth_eq]=1')).toEqual([eng.uuid, sales.uuid]);
      expect(await q('q[depth_gteq]=2')).toEqual([web.uuid]);
      expect(await q('q[depth_lt]=1')).toEqual([org.uuid]);
      expect(await q(`q[created_at_gt]=${encodeURIComponent(eng.created_at)}`)).toEqual([web.uuid, sales.uuid]);
      expect(await q(`q[created_at_lteq]=${encodeURIComponent(eng.created_at)}`)).toEqual([org.uuid, eng.uuid]);
      expect(await q(`q[team_memberships_user_uuid_eq]=${alice.uuid}`)).toEqual([org.uuid, eng.uuid]);
      expect(await q(`q[team_memberships_user_uuid_in]=${alice.uuid},${bob.uuid}`)).toEqual([org.uuid, eng.uuid, web.uuid]);
      expect(await q(`q[team_memberships_user_uuid_eq]=${bob.uuid}&q[depth_eq]=2`)).toEqual([web.uuid]);
      // any membership matching is enough: eng also has bob
      expect(await q(`q[team_memberships_user_uuid_not_eq]=${alice.uuid}`)).toEqual([eng.uuid, web.uuid, sales.uuid]);
      expect(await q('q[team_memberships_user_uuid_null]=1')).toEqual([sales.uuid]);
      const bobOnEng = eng.team_memberships.find((m: any) => m.user_uuid === bob.uuid);
      expect(await q(`q[team_memberships_uuid_eq]=${bobOnEng.uuid}`)).toEqual([eng.uuid]);
      expect(await q('q[team_memberships_role_eq]=owner')).toEqual([org.uuid, eng.uuid]);
      expect(await q('q[team_memberships_role_eq]=member')).toEqual([eng.uuid, web.uuid]);
    });

    it('echoes filters, sorts, and answers 400 for an unknown attribute, predicate or value', async () => {
      const res = await s.admin.get(`/rest/v2/teams?q[depth_gteq]=1&q[is_org_false]=true&q[s]=depth desc`);
      expect(res.status).toBe(200);
      expect(res.body.data.filters).toEqual({ depth_gteq: 1, is_org_false: true });
      expect(ids(res.body.data.records)[0]).toBe(web.uuid);
      expect(ids((await s.admin.get('/rest/v2/teams?q[s]=name asc')).body.data.records)).toEqual([
        org.uuid,
        eng.uuid,
        sales.uuid,
        web.uuid,
      ]);
      const attr = expectError(await s.admin.get('/rest/v2/teams?q[color_eq]=red'), 400, 'bad_request');
      expect(attr.details[0]).toMatchObject({ field: 'q[color_eq]', code: 'unknown_attribute' });
      const pred = expectError(await s.admin.get('/rest/v2/teams?q[name_like]=x'), 400, 'bad_request');
      expect(pred.details[0]).toMatchObject({ code: 'unknown_predicate' });
      expectError(await s.admin.get('/rest/v2/teams?q[is_org_cont]=x'), 400, 'bad_request');
      expectError(await s.admin.get('/rest/v2/teams?q[depth_eq]=deep'), 400, 'bad_request');
      expectError(await s.admin.get('/rest/v2/teams?q[is_org_eq]=maybe'), 400, 'bad_request');
      expectError(await s.admin.get('/rest/v2/teams?q[s]=color asc'), 400, 'bad_request');
      expectError(await s.admin.get('/rest/v2/teams?page=-1'), 400, 'bad_request');
      expectError(await s.admin.get('/rest/v2/teams?per_page=abc'), 400, 'bad_request');
      expectError(await s.admin.get('/rest/v2/teams?sort=name'), 400, 'bad_request');
    });

    it('users list: direct_teams_uuid returns the team’s owners and members', async () => {
      const users = await listAll(s.admin, `/rest/v2/users?q[direct_teams_uuid_eq]=${eng.uuid}`);
      expect(ids(users).sort()).toEqual([alice.uuid, bob.uuid].sort());
      expect(ids(await listAll(s.admin, `/rest/v2/users?q[direct_teams_uuid_eq]=${web.uuid}`))).toEqual([bob.uuid]);
    });
  });

  it('paginates in creation order with no record lost or repeated; per_page is clamped to 100', async () => {
    const p = await newTenant();
    const made: string[] = [];
    for (let i = 0; i < 23; i++) made.push((await mkTeam(p.admin, { name: `p${i}` })).uuid);
    const seen: string[] = [];
    for (let page = 1; ; page++) {
      const res = await p.admin.get(`/rest/v2/teams?per_page=5&page=${page}&count=true`);
      expect(res.status).toBe(200);
      expect(res.body.data.pagy).toMatchObject({ page, per_page: 5, count: 23, prev: page > 1 ? page - 1 : null });
      seen.push(...ids(res.body.data.records));
      if (!res.body.data.pagy.next) break;
      expect(res.body.data.pagy.next).toBe(page + 1);
    }
    expect(seen).toEqual(made);
    // with a residual filter the engine reads items: same guarantee
    const filtered: string[] = [];
    for (let page = 1; ; page++) {
      const res = await p.admin.get(`/rest/v2/teams?q[name_start]=p&per_page=4&page=${page}`);
      filtered.push(...ids(res.body.data.records));
      if (!res.body.data.pagy.next) break;
    }
    expect(filtered).toEqual(made);
    const clamped = await p.admin.get('/rest/v2/teams?per_page=1000');
    expect(clamped.body.data.pagy.per_page).toBe(100);
    expect(clamped.body.data.records).toHaveLength(23);
    expect((await p.admin.get('/rest/v2/teams?limit=3&offset=21')).body.data.records.map((r: any) => r.uuid)).toEqual(made.slice(21));
    expect((await p.admin.get('/rest/v2/teams?q[s]=created_at desc&per_page=2')).body.data.records.map((r: any) => r.uuid)).toEqual([
      made[22],
      made[21],
    ]);
  });
});
