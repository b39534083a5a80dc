import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { namedLabels } from '#shared/domain/labels/decide.ts';
import { addLabelCreates, readLabelNames } from '#shared/domain/labels/service.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { logger } from '#shared/logger.ts';
import { ConcurrentUpdateError } from '#shared/errors.ts';
import { type Api, expectError, listAll, newTenant, type TenantFixture } from '../support/api.ts';
import { RACE_TIMEOUT_MS, raceThreeWayCycle } from './trees.fixture.ts';

const L = '/rest/v2/labels';

async function create(api: Api, body: Record<string, unknown>) {
  const res = await api.post(L, body);
  if (res.status !== 201) throw new Error(`label create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.record as { uuid: string; name: string; [k: string]: unknown };
}

const names = (records: Array<{ name: string }>) => records.map((r) => r.name);

describe('labels', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  let member: Awaited<ReturnType<TenantFixture['user']>>;
  let member2: Awaited<ReturnType<TenantFixture['user']>>;
  let viewer: Awaited<ReturnType<TenantFixture['user']>>;
  beforeAll(async () => {
    [t, other] = await Promise.all([newTenant(), newTenant()]);
    [member, member2, viewer] = await Promise.all([t.user({ role: 'member' }), t.user({ role: 'member' }), t.user({ role: 'viewer' })]);
  });

  it('creates, gets, lists, updates and deletes a label with every record field', async () => {
    const res = await t.admin.post(L, { name: ' Urgent ', color: '#ff0000' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ type: 'label', access_source: 'admin', checks: { can_update: true, can_delete: true } });
    const rec = res.body.data.record;
    expect(rec).toEqual({
      uuid: expect.any(String),
      name: 'Urgent',
      is_group: false,
      parent_uuid: null,
      color: '#ff0000',
      creator_uuid: t.adminUuid,
      created_at: expect.any(String),
      updated_at: rec.created_at,
    });

    const got = await t.admin.get(`${L}/${rec.uuid}`);
    expect(got.status).toBe(200);
    expect(got.body.data.record).toEqual(rec);

    const list = await t.admin.get(L);
    expect(list.status).toBe(200);
    expect(list.body.data).toMatchObject({ type: 'label', checks: { can_create: true }, filters: {} });
    expect(list.body.data.records.map((r: any) => r.uuid)).toContain(rec.uuid);

    const upd = await t.admin.put(`${L}/${rec.uuid}`, { name: 'Very urgent', color: null });
    expect(upd.status).toBe(200);
    expect(upd.body.data.record).toMatchObject({
      uuid: rec.uuid,
      name: 'Very urgent',
      color: null,
      is_group: false,
      created_at: rec.created_at,
    });
    expect(upd.body.data.record.updated_at >= rec.updated_at).toBe(true);

    const del = await t.admin.delete(`${L}/${rec.uuid}`);
    expect(del.status).toBe(200);
    expect(del.body.data).toMatchObject({ type: 'label', record: { uuid: rec.uuid, name: 'Very urgent' } });
    expectError(await t.admin.get(`${L}/${rec.uuid}`), 404, 'not_found');
    expectError(await t.admin.delete(`${L}/${rec.uuid}`), 404, 'not_found');
  });

  it('keeps names unique ignoring case and spacing (422 taken); a rename or delete frees the old name', async () => {
    const fin = await create(t.admin, { name: 'Finance' });
    const dup = expectError(await t.admin.post(L, { name: '  FINANCE ' }), 422, 'taken');
    expect(dup.details[0]!.field).toBe('name');
    expectError(await member.api.post(L, { name: 'finance', is_group: true }), 422, 'taken');
    const ops = await create(t.admin, { name: 'Ops  Team' });
    expectError(await t.admin.post(L, { name: 'ops team' }), 422, 'taken');
    expectError(await t.admin.put(`${L}/${ops.uuid}`, { name: 'finance' }), 422, 'taken');
    // renaming a label to another spelling of its own name is not a clash
    expect((await t.admin.put(`${L}/${fin.uuid}`, { name: 'FINANCE' })).body.data.record.name).toBe('FINANCE');
    expect((await t.admin.put(`${L}/${fin.uuid}`, { name: 'Finance Q1' })).status).toBe(200);
    await create(t.admin, { name: 'finance' });
    expect((await t.admin.delete(`${L}/${ops.uuid}`)).status).toBe(200);
    await create(t.admin, { name: 'OPS TEAM' });
  });

  it('lets exactly one of several concurrent same-name creates win', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => member.api.post(L, { name: i % 2 ? 'Race' : 'race' })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 201)) expectError(r, 422, 'taken');
    expect(await listAll(t.admin, `${L}?q[name_eq]=RACE`)).toHaveLength(1);
  });

  it('checks groups: the parent must be a group of the tenant, is_group stays on while it has children', async () => {
    const group = await create(t.admin, { name: 'Region', is_group: true });
    const regular = await create(t.admin, { name: 'Emea' });
    const child = await create(member.api, { name: 'Apac', parent_uuid: group.uuid });
    expect(child).toMatchObject({ parent_uuid: group.uuid, is_group: false, creator_uuid: member.uuid });

    const notGroup = expectError(await t.admin.post(L, { name: 'x1', parent_uuid: regular.uuid }), 422, 'validation_failed');
    expect(notGroup.details[0]).toMatchObject({ field: 'parent_uuid', code: 'not_a_group' });
    expect(
      expectError(await t.admin.post(L, { name: 'x2', parent_uuid: crypto.randomUUID() }), 422, 'validation_failed').details[0]!.field,
    ).toBe('parent_uuid');
    const otherGroup = await create(other.admin, { name: 'Foreign group', is_group: true });
    expectError(await t.admin.post(L, { name: 'x3', parent_uuid: otherGroup.uuid }), 422, 'validation_failed');
    expectError(await t.admin.post(L, { name: 'x4', parent_uuid: 'not-a-uuid' }), 422, 'validation_failed');
    // nothing was written by the refused creates
    expect(await listAll(t.admin, `${L}?q[name_start]=x`)).toEqual([]);

    const off = expectError(await t.admin.put(`${L}/${group.uuid}`, { is_group: false }), 422, 'validation_failed');
    expect(off.details[0]).toMatchObject({ field: 'is_group', code: 'has_children' });
    expectError(await t.admin.put(`${L}/${group.uuid}`, { parent_uuid: group.uuid }), 422, 'validation_failed');
    expectError(await t.admin.put(`${L}/${regular.uuid}`, { parent_uuid: regular.uuid }), 422, 'validation_failed');

    // move the child under another group, then out; the emptied group can become a regular label
    const group2 = await create(t.admin, { name: 'Region 2', is_group: true });
    expect((await t.admin.put(`${L}/${child.uuid}`, { parent_uuid: group2.uuid })).body.data.record.parent_uuid).toBe(group2.uuid);
    expect(names(await listAll(t.admin, `${L}?q[parent_uuid_eq]=${group.uuid}`))).toEqual([]);
    expect(names(await listAll(t.admin, `${L}?q[parent_uuid_eq]=${group2.uuid}`))).toEqual(['Apac']);
    expect((await t.admin.put(`${L}/${group.uuid}`, { is_group: false })).body.data.record.is_group).toBe(false);
    const promoted = await t.admin.put(`${L}/${child.uuid}`, { is_group: true, parent_uuid: null });
    expect(promoted.body.data.record).toMatchObject({ is_group: true, parent_uuid: null });
    expectError(await t.admin.post(L, { name: 'x6', parent_uuid: group.uuid }), 422, 'validation_failed');
  });

  it('refuses a label as its own parent at once (422 cycle), even a group turned regular in the same update', async () => {
    const group = await create(t.admin, { name: 'Selfish', is_group: true });
    const res = await t.admin.put(`${L}/${group.uuid}`, { is_group: false, parent_uuid: group.uuid });
    expect(expectError(res, 422, 'validation_failed').details[0]).toMatchObject({ field: 'parent_uuid', code: 'cycle' });
    expect(Number(res.headers.get('x-db-round-trips'))).toBeLessThanOrEqual(2); // no retry loop
    expect((await t.admin.get(`${L}/${group.uuid}`)).body.data.record).toMatchObject({ is_group: true, parent_uuid: null });
  });

  it('nests groups: parent_parent_uuid and parent_is_group filters, cycles refused, a group deleted with everything under it', async () => {
    const top = await create(t.admin, { name: 'Nest top', is_group: true });
    const mid = await create(t.admin, { name: 'Nest mid', is_group: true, parent_uuid: top.uuid });
    const leaf = await create(member.api, { name: 'Nest leaf', parent_uuid: mid.uuid });
    expect(mid).toMatchObject({ is_group: true, parent_uuid: top.uuid });
    expect(names(await listAll(t.admin, `${L}?q[parent_parent_uuid_eq]=${top.uuid}`))).toEqual(['Nest leaf']);
    expect(names(await listAll(t.admin, `${L}?q[parent_is_group_true]=1&q[name_start]=Nest`))).toEqual(['Nest mid', 'Nest leaf']);

    // no label under itself or anything below it; nothing changed by the refusals
    for (const [id, parent] of [
      [top.uuid, mid.uuid],
      [top.uuid, top.uuid],
      [mid.uuid, mid.uuid],
    ] as const) {
      expect(expectError(await t.admin.put(`${L}/${id}`, { parent_uuid: parent }), 422, 'validation_failed').details[0]).toMatchObject({
        field: 'parent_uuid',
        code: 'cycle',
      });
    }
    expect((await t.admin.get(`${L}/${top.uuid}`)).body.data.record.parent_uuid).toBeNull();
    // a regular label still takes no children, and a group becomes a regular one only when empty
    expect(
      expectError(await t.admin.post(L, { name: 'Nest x', parent_uuid: leaf.uuid }), 422, 'validation_failed').details[0],
    ).toMatchObject({ code: 'not_a_group' });
    expect(expectError(await t.admin.put(`${L}/${mid.uuid}`, { is_group: false }), 422, 'validation_failed').details[0]).toMatchObject({
      code: 'has_children',
    });

    const del = await t.admin.delete(`${L}/${top.uuid}`);
    expect(del.status).toBe(200);
    for (const l of [mid, leaf]) expectError(await t.admin.get(`${L}/${l.uuid}`), 404, 'not_found');
  });

  it(
    'never stores a group cycle under concurrent moves (many rounds)',
    async () => {
      for (let round = 0; round < 20; round++) {
        const groups = await Promise.all(['a', 'b', 'c'].map((n) => create(t.admin, { name: `cyc-${round}-${n}`, is_group: true })));
        await raceThreeWayCycle(
          groups.map((g) => g.uuid) as [string, string, string],
          (child, parent) => t.admin.put(`${L}/${child}`, { parent_uuid: parent }),
          async (id) => (await t.admin.get(`${L}/${id}`)).body.data.record.parent_uuid,
          round,
        );
      }
    },
    RACE_TIMEOUT_MS,
  );

  it('refuses body fields on a delete (400) and deletes nothing', async () => {
    const lbl = await create(t.admin, { name: 'Keep me' });
    const e = expectError(await t.admin.delete(`${L}/${lbl.uuid}`, { cascade: true }), 400, 'bad_request');
    expect(e.details.map((d) => d.field)).toEqual(['cascade']);
    expect((await t.admin.get(`${L}/${lbl.uuid}`)).status).toBe(200);
    expect((await t.admin.delete(`${L}/${lbl.uuid}`, {})).status).toBe(200);
  });

  it('deletes a group with its children, leaving other labels; deleting a child leaves its group', async () => {
    const group = await create(t.admin, { name: 'Quarter', is_group: true });
    const kids = [];
    for (const name of ['Q1', 'Q2', 'Q3']) kids.push(await create(member.api, { name, parent_uuid: group.uuid }));
    const bystander = await create(t.admin, { name: 'Bystander' });

    expect((await t.admin.delete(`${L}/${kids[0]!.uuid}`)).status).toBe(200);
    expect((await t.admin.get(`${L}/${group.uuid}`)).status).toBe(200);

    const del = await t.admin.delete(`${L}/${group.uuid}`);
    expect(del.status).toBe(200);
    expect(del.body.data.record).toMatchObject({ uuid: group.uuid, is_group: true });
    for (const k of kids) expectError(await t.admin.get(`${L}/${k.uuid}`), 404, 'not_found');
    expect((await t.admin.get(`${L}/${bystander.uuid}`)).status).toBe(200);
    expect(await listAll(t.admin, `${L}?q[parent_uuid_eq]=${group.uuid}`)).toEqual([]);
    // the children's names were released with them
    await create(t.admin, { name: 'q2' });
  });

  it('deletes a group with more children than one transaction holds, children created concurrently', async () => {
    const group = await create(t.admin, { name: 'Big group', is_group: true });
    // batches of 10 concurrent creates: each touches the group (see claimParent), so they contend and retry
    for (let batch = 0; batch < 4; batch++) {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => t.admin.post(L, { name: `big-${batch * 10 + i}`, parent_uuid: group.uuid })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    }
    expect(await listAll(t.admin, `${L}?q[parent_uuid_eq]=${group.uuid}`)).toHaveLength(40);
    expect((await t.admin.delete(`${L}/${group.uuid}`)).status).toBe(200);
    expect(await listAll(t.admin, `${L}?q[name_start]=big-`)).toEqual([]);
    expectError(await t.admin.get(`${L}/${group.uuid}`), 404, 'not_found');
  });

  it('answers 400 for unknown fields, wrong types and bad JSON; 422 for blank names', async () => {
    for (const field of ['tenant_uuid', 'creator_uuid', 'uuid']) {
      const e = expectError(await t.admin.post(L, { name: `bad-${field}`, [field]: crypto.randomUUID() }), 400, 'bad_request');
      expect(e.details.map((d) => d.field)).toContain(field);
    }
    expectError(await t.admin.post(L, { name: 42 }), 400, 'bad_request');
    expectError(await t.admin.post(L, { name: 'typed', is_group: 'yes' }), 400, 'bad_request');
    expectError(await t.admin.post(L, { name: 'typed', color: 7 }), 400, 'bad_request');
    expectError(await t.admin.post(L, { name: 'typed', parent_uuid: 7 }), 400, 'bad_request');
    expectError(await t.admin.post(L, { is_group: true }), 400, 'bad_request');
    expectError(await t.admin.post(L, { label: { name: 'wrapped' } }), 400, 'bad_request');
    expectError(await t.admin.request('POST', L, '{"name":', { 'content-type': 'application/json' }), 400, 'bad_request');
    expectError(await t.admin.post(L, { name: '   ' }), 422, 'validation_failed');
    expectError(await t.admin.post(L, { name: 'x'.repeat(101) }), 422, 'validation_failed');
    const lbl = await create(t.admin, { name: 'Typed' });
    expectError(await t.admin.put(`${L}/${lbl.uuid}`, { is_group: null }), 400, 'bad_request');
    expectError(await t.admin.put(`${L}/${lbl.uuid}`, { owner: 'me' }), 400, 'bad_request');
  });

  it('answers 400 for bad filters and list parameters; clamps per_page to 100', async () => {
    expect(expectError(await t.admin.get(`${L}?q[nope_eq]=1`), 400, 'bad_request').details[0]!.field).toBe('q[nope_eq]');
    expectError(await t.admin.get(`${L}?q[name_sometimes]=1`), 400, 'bad_request');
    expectError(await t.admin.get(`${L}?q[is_group_eq]=maybe`), 400, 'bad_request');
    expectError(await t.admin.get(`${L}?q[is_group_cont]=t`), 400, 'bad_request');
    expectError(await t.admin.get(`${L}?q[created_at_gt]=yesterday`), 400, 'bad_request');
    expectError(await t.admin.get(`${L}?page=abc`), 400, 'bad_request');
    expectError(await t.admin.get(`${L}?per_page=-1`), 400, 'bad_request');
    expectError(await t.admin.get(`${L}?offset=x`), 400, 'bad_request');
    expectError(await t.admin.get(`${L}?color=red`), 400, 'bad_request');
    const res = await t.admin.get(`${L}?per_page=1000`);
    expect(res.status).toBe(200);
    expect(res.body.data.pagy.per_page).toBe(100);
  });

  it('lets admins and members create; the creator or an admin update and delete; viewers only read', async () => {
    const mine = await member.api.post(L, { name: 'Member label' });
    expect(mine.status).toBe(201);
    expect(mine.body.data).toMatchObject({ access_source: 'creator', checks: { can_update: true, can_delete: true } });
    const id = mine.body.data.record.uuid;

    const seen = await member2.api.get(`${L}/${id}`);
    expect(seen.body.data).toMatchObject({ access_source: 'public', checks: { can_update: false, can_delete: false } });
    expectError(await member2.api.put(`${L}/${id}`, { color: 'blue' }), 403, 'forbidden');
    expectError(await member2.api.delete(`${L}/${id}`), 403, 'forbidden');

    const asViewer = await viewer.api.get(`${L}/${id}`);
    expect(asViewer.status).toBe(200);
    expect(asViewer.body.data).toMatchObject({ access_source: 'public', checks: { can_update: false, can_delete: false } });
    expectError(await viewer.api.post(L, { name: 'Viewer label' }), 403, 'forbidden');
    expectError(await viewer.api.put(`${L}/${id}`, { color: 'blue' }), 403, 'forbidden');
    expectError(await viewer.api.delete(`${L}/${id}`), 403, 'forbidden');
    expect((await viewer.api.get(L)).body.data.checks).toEqual({ can_create: false });
    expect((await member2.api.get(L)).body.data.checks).toEqual({ can_create: true });

    expect((await member.api.put(`${L}/${id}`, { color: 'green' })).body.data.record.color).toBe('green');
    const byAdmin = await t.admin.put(`${L}/${id}`, { color: 'teal' });
    expect(byAdmin.body.data).toMatchObject({ access_source: 'admin', record: { color: 'teal', creator_uuid: member.uuid } });

    // a member may put a label in someone else's group, but may not delete that group
    const adminGroup = await create(t.admin, { name: 'Admin group', is_group: true });
    expect((await member.api.put(`${L}/${id}`, { parent_uuid: adminGroup.uuid })).status).toBe(200);
    expectError(await member.api.delete(`${L}/${adminGroup.uuid}`), 403, 'forbidden');
    expect((await member.api.delete(`${L}/${id}`)).status).toBe(200);

    // a creator demoted to viewer loses write access to its labels
    const demoted = await t.user({ role: 'member' });
    const own = await create(demoted.api, { name: 'Soon read-only' });
    expect((await t.admin.put(`/rest/v2/users/${demoted.uuid}`, { user: { role: 'viewer' } })).status).toBe(200);
    const view = await demoted.api.get(`${L}/${own.uuid}`);
    expect(view.body.data).toMatchObject({ access_source: 'creator', checks: { can_update: false, can_delete: false } });
    expectError(await demoted.api.delete(`${L}/${own.uuid}`), 403, 'forbidden');
  });

  it('isolates tenants: another tenant’s label is 404 for every operation and absent from lists', async () => {
    const foreign = await create(other.admin, { name: 'Foreign' });
    for (const api of [t.admin, member.api, viewer.api]) {
      expectError(await api.get(`${L}/${foreign.uuid}`), 404, 'not_found');
      expectError(await api.put(`${L}/${foreign.uuid}`, { color: 'red' }), 404, 'not_found');
      expectError(await api.delete(`${L}/${foreign.uuid}`), 404, 'not_found');
    }
    expect((await listAll(t.admin, L)).some((l) => l.uuid === foreign.uuid)).toBe(false);
    expect(await listAll(t.admin, `${L}?q[uuid_eq]=${foreign.uuid}`)).toEqual([]);
    expect(await listAll(t.admin, `${L}?q[name_eq]=Foreign`)).toEqual([]);
    // the same name is free in this tenant
    await create(t.admin, { name: 'Foreign' });
    expect((await other.admin.get(`${L}/${foreign.uuid}`)).body.data.record.name).toBe('Foreign');
  });

  describe('filters and pagination', () => {
    let f: TenantFixture;
    let alpha: any, beta: any, a: any, c: any;
    const q = async (query: string) => names(await listAll(f.admin, `${L}?${query}`));
    beforeAll(async () => {
      f = await newTenant();
      alpha = await create(f.admin, { name: 'Team Alpha', is_group: true, color: 'red' });
      beta = await create(f.admin, { name: 'Team Beta', is_group: true });
      a = await create(f.admin, { name: 'alpha-one', parent_uuid: alpha.uuid, color: 'red' });
      await create(f.admin, { name: 'alpha-two', parent_uuid: alpha.uuid });
      c = await create(f.admin, { name: 'beta-one', parent_uuid: beta.uuid });
      await create(f.admin, { name: 'Loose' });
    });

    it('filters on every attribute, index-served or not, and echoes the filters', async () => {
      expect(await q(`q[uuid_eq]=${a.uuid}`)).toEqual(['alpha-one']);
      expect(await q(`q[uuid_in][]=${c.uuid}&q[uuid_in][]=${a.uuid}`)).toEqual(['alpha-one', 'beta-one']);
      expect(await q(`q[uuid_not_eq]=${a.uuid}&q[is_group_false]=1`)).toEqual(['alpha-two', 'beta-one', 'Loose']);
      expect(await q('q[name_eq]=ALPHA-ONE')).toEqual(['alpha-one']);
      expect(await q('q[name_eq]=nothing')).toEqual([]);
      expect(await q('q[name_in]=loose,Beta-One,missing')).toEqual(['beta-one', 'Loose']);
      expect(await q('q[name_cont]=one')).toEqual(['alpha-one', 'beta-one']);
      expect(await q('q[name_start]=team')).toEqual(['Team Alpha', 'Team Beta']);
      expect(await q('q[name_end]=TWO')).toEqual(['alpha-two']);
      expect(await q(`q[parent_uuid_eq]=${alpha.uuid}`)).toEqual(['alpha-one', 'alpha-two']);
      expect(await q(`q[parent_uuid_in]=${alpha.uuid},${beta.uuid}`)).toEqual(['alpha-one', 'alpha-two', 'beta-one']);
      expect(await q(`q[parent_uuid_eq]=${alpha.uuid}&q[color_eq]=red`)).toEqual(['alpha-one']);
      expect(await q('q[parent_uuid_null]=1')).toEqual(['Team Alpha', 'Team Beta', 'Loose']);
      expect(await q('q[parent_uuid_not_null]=true')).toEqual(['alpha-one', 'alpha-two', 'beta-one']);
      expect(await q('q[is_group_true]=1')).toEqual(['Team Alpha', 'Team Beta']);
      expect(await q('q[is_group_eq]=false')).toEqual(['alpha-one', 'alpha-two', 'beta-one', 'Loose']);
      expect(await q(`q[creator_uuid_eq]=${f.adminUuid}`)).toHaveLength(6);
      expect(await q(`q[created_at_gteq]=${encodeURIComponent(c.created_at)}`)).toEqual(['beta-one', 'Loose']);
      expect(await q(`q[created_at_lt]=${encodeURIComponent(beta.created_at)}`)).toEqual(['Team Alpha']);
      expect(await q('q[parent_name_eq]=team alpha')).toEqual(['alpha-one', 'alpha-two']);
      expect(await q('q[parent_name_in][]=Team Beta&q[parent_name_in][]=Team Alpha')).toEqual(['alpha-one', 'alpha-two', 'beta-one']);
      expect(await q('q[parent_name_cont]=beta')).toEqual(['beta-one']);
      expect(await q('q[parent_name_null]=1&q[is_group_false]=1')).toEqual(['Loose']);
      expect(await q('q[parent_is_group_true]=1')).toEqual(['alpha-one', 'alpha-two', 'beta-one']);
      expect(await q('q[parent_color_eq]=red')).toEqual(['alpha-one', 'alpha-two']);
      expect(await q('q[parent_parent_uuid_null]=1&q[parent_uuid_not_null]=1')).toEqual(['alpha-one', 'alpha-two', 'beta-one']);
      expect(await q('q[parent_parent_uuid_not_null]=1')).toEqual([]);
      expect(await q(`q[parent_parent_uuid_eq]=${alpha.uuid}`)).toEqual([]);
      expect(await q('q[s]=name desc&q[is_group_false]=1')).toEqual(['Loose', 'beta-one', 'alpha-two', 'alpha-one']);
      expect(await q('q[s]=created_at desc&q[parent_uuid_not_null]=1')).toEqual(['beta-one', 'alpha-two', 'alpha-one']);

      // names are looked up through their claims in one read, however many; a name too long to be a key matches nothing
      const byNames = await f.admin.get(`${L}?q[name_in]=loose,beta-one,alpha-one,Team Beta,missing`);
      expect(names(byNames.body.data.records)).toEqual(['Team Beta', 'alpha-one', 'beta-one', 'Loose']);
      expect(byNames.headers.get('x-db-round-trips')).toBe('2'); // the name claims beside the caller, then the labels
      expect(names((await f.admin.get(`${L}?q[name_eq]=${'n'.repeat(3000)}`)).body.data.records)).toEqual([]);
      expect(names((await f.admin.get(`${L}?q[parent_name_eq]=${'n'.repeat(3000)}`)).body.data.records)).toEqual([]);

      const res = await f.admin.get(`${L}?q[is_group_true]=1&q[name_in][]=Team Beta&q[name_in][]=x`);
      expect(res.body.data.filters).toEqual({ is_group_true: true, name_in: ['Team Beta', 'x'] });
      expect(names(res.body.data.records)).toEqual(['Team Beta']);
    });

    it('pages through every record exactly once with page, offset and count', async () => {
      const p = await newTenant();
      const created: string[] = [];
      for (let i = 0; i < 23; i++) created.push((await create(p.admin, { name: `page-${String(i).padStart(2, '0')}` })).uuid);

      const seen: string[] = [];
      for (let page = 1; ; page++) {
        const res = await p.admin.get(`${L}?page=${page}&per_page=5&count=true`);
        expect(res.status).toBe(200);
        expect(res.body.data.pagy).toMatchObject({ page, per_page: 5, offset: 0, count: 23, prev: page > 1 ? page - 1 : null });
        seen.push(...res.body.data.records.map((r: any) => r.uuid));
        if (!res.body.data.pagy.next) break;
        expect(res.body.data.pagy.next).toBe(page + 1);
      }
      expect(seen).toEqual(created);

      // limit is the per_page alias; count is absent unless asked for
      const first = await p.admin.get(`${L}?limit=4`);
      expect(first.body.data.pagy).toEqual({ page: 1, per_page: 4, offset: 0, next: 2, prev: null, next_cursor: expect.any(String) });

      // offset skips records; the next page keeps the same offset
      const off1 = await p.admin.get(`${L}?offset=3&per_page=10`);
      const off2 = await p.admin.get(`${L}?offset=3&per_page=10&page=${off1.body.data.pagy.next}`);
      const off3 = await p.admin.get(`${L}?offset=3&per_page=10&page=3`);
      expect([...off1.body.data.records, ...off2.body.data.records, ...off3.body.data.records].map((r: any) => r.uuid)).toEqual(
        created.slice(3),
      );
      expect(off2.body.data.pagy.next).toBeNull();
      expect(off3.body.data.records).toEqual([]);

      const past = await p.admin.get(`${L}?offset=500&count=true`);
      expect(past.body.data.records).toEqual([]);
      expect(past.body.data.pagy).toMatchObject({ next: null, count: 23 });

      // pages of a filtered (residual) list: nothing lost or repeated either
      const filtered: string[] = [];
      for (let page = 1; ; page++) {
        const res = await p.admin.get(`${L}?q[name_end]=5&page=${page}&per_page=1`);
        filtered.push(...names(res.body.data.records));
        if (!res.body.data.pagy.next) break;
      }
      expect(filtered).toEqual(['page-05', 'page-15']);
    });
  });

  describe('readLabelNames, namedLabels and addLabelCreates (the label names of check-in writes)', () => {
    // as a check-in write uses them: read, resolve with ids drawn before its retry loop, then add the creations to its transaction
    const labelsForNames = async (ctx: DomainCtx, names: string[], tx: WriteTx, ids = names.map(() => randomUUID())) => {
      const named = namedLabels(await readLabelNames(ctx, ctx.loader, names), ids, ctx.caller.userId, new Date().toISOString());
      if ('error' in named) throw named.error;
      const { labels, created } = named.write;
      addLabelCreates(tx, created);
      return labels;
    };

    // Called directly with a domain context as a goal write would, against the same DynamoDB Local.
    const ctxFor = async (fixture: TenantFixture): Promise<DomainCtx> => {
      const user = (await fixture.admin.get(`/rest/v2/users/${fixture.adminUuid}`)).body.data.record;
      const data = { tenantId: fixture.tenantUuid, db: baseDb() };
      return {
        ...data,
        caller: { tenantId: fixture.tenantUuid, userId: fixture.adminUuid, role: 'admin', user },
        loader: new Loader(data),
        log: logger,
        requestId: 'test',
        teams: async () => new Set(),
      };
    };

    it('returns existing labels case-insensitively, de-duplicated, in input order, and creates the missing ones in the caller’s transaction', async () => {
      const f = await newTenant();
      const existing = await create(f.admin, { name: 'Growth' });
      const ctx = await ctxFor(f);
      const tx = new WriteTx(ctx);
      const out = await labelsForNames(ctx, ['new one', 'GROWTH', ' New  One ', 'growth', 'Another'], tx);
      expect(out.map((l) => l.name)).toEqual(['new one', 'Growth', 'Another']);
      expect(out[1]!.uuid).toBe(existing.uuid);
      expect(out[0]).toEqual({ uuid: expect.any(String), name: 'new one' }); // as a check-in keeps it
      // nothing is written before the caller commits
      expectError(await f.admin.get(`${L}/${out[0]!.uuid}`), 404, 'not_found');
      await tx.commit();
      expect((await f.admin.get(`${L}/${out[0]!.uuid}`)).body.data.record).toMatchObject({
        name: 'new one',
        is_group: false,
        parent_uuid: null,
        color: null,
        creator_uuid: f.adminUuid,
      });
      // labels created in one write share created_at, so their mutual list order is by uuid
      expect(names(await listAll(f.admin, L)).sort()).toEqual(['Another', 'Growth', 'new one']);

      // a second call finds them all and adds nothing to the transaction
      const tx2 = new WriteTx(ctx);
      const again = await labelsForNames(await ctxFor(f), ['another', 'NEW ONE'], tx2);
      expect(again.map((l) => l.uuid)).toEqual([out[2]!.uuid, out[0]!.uuid]);
      expect(tx2.size).toBe(0);
    });

    it('reports a label created concurrently as a concurrent update (so the goal write retries), not as taken', async () => {
      const f = await newTenant();
      const ctx = await ctxFor(f);
      const tx = new WriteTx(ctx);
      await labelsForNames(ctx, ['Contested'], tx);
      await create(f.admin, { name: 'contested' });
      await expect(tx.commit()).rejects.toBeInstanceOf(ConcurrentUpdateError);
      const retry = new WriteTx(ctx);
      const [found] = await labelsForNames(await ctxFor(f), ['Contested'], retry);
      expect(found!.name).toBe('contested');
      expect(retry.size).toBe(0);
    });

    it('names a new label by the id drawn for its place among the distinct names, so a retried write names the same label', async () => {
      const f = await newTenant();
      const ctx = await ctxFor(f);
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      const first = await labelsForNames(ctx, ['Alpha', 'alpha', 'Beta'], new WriteTx(ctx), ids);
      const retried = await labelsForNames(ctx, ['Alpha', 'alpha', 'Beta'], new WriteTx(ctx), ids);
      expect(first.map((l) => l.uuid)).toEqual([ids[0], ids[1]]);
      expect(retried.map((l) => l.uuid)).toEqual(first.map((l) => l.uuid));
    });

    it('refuses blank or over-long names (422 on labels)', async () => {
      const f = await newTenant();
      const ctx = await ctxFor(f);
      await expect(labelsForNames(ctx, ['ok', '  '], new WriteTx(ctx))).rejects.toMatchObject({ status: 422, code: 'validation_failed' });
      await expect(labelsForNames(ctx, ['x'.repeat(101)], new WriteTx(ctx))).rejects.toMatchObject({
        status: 422,
        details: [{ field: 'labels' }],
      });
    });
  });
});
