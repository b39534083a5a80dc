import { describe, expect, it, beforeAll } from 'vitest';
import { Api, expectError, listAll, newTenant, type TenantFixture } from '../support/api.ts';
import { RACE_TIMEOUT_MS, raceThreeWayCycle } from './trees.fixture.ts';

describe('users', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  beforeAll(async () => {
    t = await newTenant();
    other = await newTenant();
  });

  it('creates, gets, lists and updates a user with every record field', async () => {
    const res = await t.admin.post('/rest/v2/users', {
      user: { email: 'Ada.Lovelace@Example.test', profile_attributes: { job_title: 'Engineer' } },
    });
    expect(res.status).toBe(201);
    const rec = res.body.data.record;
    expect(res.body.data.type).toBe('user');
    expect(res.body.data.access_source).toBe('admin');
    expect(res.body.data.checks.can_update).toBe(true);
    expect(rec).toMatchObject({
      email: 'Ada.Lovelace@Example.test',
      display_name: 'Ada.Lovelace',
      status: 'active',
      role: 'member',
      manager_uuid: null,
      account_id: null,
      path: null,
      license_type: 'full',
      display_name_source: 'manual',
      avatar_url: null,
      external_employee_id: null,
      creator_uuid: t.adminUuid,
    });
    const got = await t.admin.get(`/rest/v2/users/${rec.uuid}`);
    expect(got.status).toBe(200);
    expect(got.body.data.record).toEqual(rec);
    // a uuid is the same uuid in upper case
    expect((await t.admin.get(`/rest/v2/users/${rec.uuid.toUpperCase()}`)).body.data.record).toEqual(rec);
    const upd = await t.admin.put(`/rest/v2/users/${rec.uuid}`, { user: { display_name: 'Ada', profile_attributes: { about: 'math' } } });
    expect(upd.status).toBe(200);
    expect(upd.body.data.record.display_name).toBe('Ada');
    expect(upd.body.data.record.profile_attributes).toEqual({ job_title: 'Engineer', about: 'math' });
  });

  it('refuses a duplicate e-mail ignoring case, with nothing written', async () => {
    await t.admin.post('/rest/v2/users', { user: { email: 'dup@example.test' } });
    const res = await t.admin.post('/rest/v2/users', { user: { email: 'DUP@example.test' } });
    expectError(res, 422, 'taken');
    const all = await listAll(t.admin, '/rest/v2/users?q[email_eq]=dup@example.test');
    expect(all).toHaveLength(1);
  });

  it('answers 400 for unknown fields, wrong types and bad JSON; 422 for a bad e-mail', async () => {
    const unknown = expectError(
      await t.admin.post('/rest/v2/users', { user: { email: 'x@example.test', tenant_uuid: 'x' } }),
      400,
      'bad_request',
    );
    expect(unknown.details.map((d) => d.field)).toContain('user.tenant_uuid');
    expectError(await t.admin.post('/rest/v2/users', { user: { email: 42 } }), 400, 'bad_request');
    expectError(await t.admin.request('POST', '/rest/v2/users', '{not json', { 'content-type': 'application/json' }), 400, 'bad_request');
    expectError(await t.admin.post('/rest/v2/users', { user: { email: 'not-an-email' } }), 422, 'validation_failed');
    expectError(await t.admin.post('/rest/v2/users', { user: {} }), 400, 'bad_request');
    // an enum given another JSON type is a wrong type (400); a string outside the enum breaks a rule (422)
    expectError(await t.admin.post('/rest/v2/users', { user: { email: 'r@example.test', role: 5 } }), 400, 'bad_request');
    expectError(await t.admin.post('/rest/v2/users', { user: { email: 'r@example.test', role: 'boss' } }), 422, 'validation_failed');
    // an avatar is an http(s) URL: a javascript: or data: URL would run in a client that links or embeds it
    for (const avatar_url of ['javascript:alert(1)', 'data:text/html,<script>alert(1)</script>']) {
      expect(
        expectError(await t.admin.post('/rest/v2/users', { user: { email: 'av@example.test', avatar_url } }), 422, 'validation_failed')
          .details[0]!.field,
      ).toBe('user.avatar_url');
    }
    expect(
      (await t.admin.post('/rest/v2/users', { user: { email: 'av@example.test', avatar_url: 'https://cdn.example.test/a.png' } })).status,
    ).toBe(201);
  });

  it('validates manager_uuid: must exist in the tenant, no cycles', async () => {
    const a = await t.user();
    const b = await t.user({ extra: { manager_uuid: a.uuid } });
    expect(b.record.manager_uuid).toBe(a.uuid);
    expectError(await t.admin.put(`/rest/v2/users/${a.uuid}`, { user: { manager_uuid: b.uuid } }), 422, 'validation_failed');
    expectError(
      await t.admin.post('/rest/v2/users', { user: { email: 'm@example.test', manager_uuid: other.adminUuid } }),
      422,
      'validation_failed',
    );
    const reports = await listAll(t.admin, `/rest/v2/users?q[manager_uuid_eq]=${a.uuid}`);
    expect(reports.map((u) => u.uuid)).toEqual([b.uuid]);
    const byManagerName = await listAll(t.admin, `/rest/v2/users?q[manager_display_name_eq]=${encodeURIComponent(a.record.display_name)}`);
    expect(byManagerName.map((u) => u.uuid)).toEqual([b.uuid]);
  });

  it('checks only that a new user’s manager exists (a new user is in no one’s chain); re-sending the manager walks nothing', async () => {
    const top = await t.user();
    const mid = await t.user({ extra: { manager_uuid: top.uuid } });
    const low = await t.user({ extra: { manager_uuid: mid.uuid } });
    // the caller's user, the manager, the transaction: not one read per level of the manager's chain
    const res = await t.admin.post('/rest/v2/users', {
      user: { email: `chain-${crypto.randomUUID().slice(0, 8)}@example.test`, manager_uuid: low.uuid },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-db-round-trips')).toBe('3');
    const same = await t.admin.put(`/rest/v2/users/${res.body.data.record.uuid}`, { user: { manager_uuid: low.uuid } });
    expect(same.status).toBe(200);
    expect(same.headers.get('x-db-round-trips')).toBe('3');
    // a changed manager is still checked for cycles through the whole chain
    expectError(
      await t.admin.put(`/rest/v2/users/${top.uuid}`, { user: { manager_uuid: res.body.data.record.uuid } }),
      422,
      'validation_failed',
    );
  });

  it(
    'never stores a management cycle under concurrent manager changes (many rounds)',
    async () => {
      for (let round = 0; round < 20; round++) {
        const made = await Promise.all(
          [0, 1, 2].map(() => t.admin.post('/rest/v2/users', { user: { email: `cyc-${crypto.randomUUID().slice(0, 8)}@example.test` } })),
        );
        await raceThreeWayCycle(
          made.map((r) => r.body.data.record.uuid) as [string, string, string],
          (u, m) => t.admin.put(`/rest/v2/users/${u}`, { user: { manager_uuid: m } }),
          async (id) => (await t.admin.get(`/rest/v2/users/${id}`)).body.data.record.manager_uuid,
          round,
        );
      }
    },
    RACE_TIMEOUT_MS,
  );

  it('answers 404 (not 500) for an id or a filter value too long to be a key', async () => {
    const long = 'a'.repeat(3000);
    expectError(await t.admin.get(`/rest/v2/users/${long}`), 404, 'not_found');
    expectError(await t.admin.put(`/rest/v2/users/${long}`, { user: { display_name: 'x' } }), 404, 'not_found');
    for (const q of [
      `q[uuid_eq]=${long}`,
      `q[uuid_in]=${long},${t.adminUuid}`,
      `q[manager_uuid_eq]=${long}`,
      `q[direct_teams_uuid_eq]=${long}`,
    ]) {
      const res = await t.admin.get(`/rest/v2/users?${q}`);
      expect(res.status, q).toBe(200);
    }
    expect((await t.admin.get(`/rest/v2/users?q[uuid_in]=${long},${t.adminUuid}`)).body.data.records.map((u: any) => u.uuid)).toEqual([
      t.adminUuid,
    ]);
  });

  it('reads each user’s teams once however many team filters apply', async () => {
    const s = await newTenant();
    const members = await Promise.all([s.user(), s.user(), s.user()]);
    await s.admin.post('/rest/v2/teams', { name: 'Once', member_uuids: members.map((m) => m.uuid) });
    const one = await s.admin.get('/rest/v2/users?q[direct_teams_name_eq]=Once');
    const three = await s.admin.get(
      '/rest/v2/users?q[direct_teams_name_eq]=Once&q[direct_teams_status_eq]=active&q[team_memberships_role_eq]=member',
    );
    expect(one.body.data.records).toHaveLength(3);
    expect(three.body.data.records.map((u: any) => u.uuid)).toEqual(one.body.data.records.map((u: any) => u.uuid));
    expect(three.headers.get('x-db-round-trips')).toBe(one.headers.get('x-db-round-trips'));
  });

  it('filters on teams, memberships and profile attributes', async () => {
    const a = await t.user({ extra: { profile_attributes: { job_title: 'Staff Engineer' } } });
    const b = await t.user({ extra: { profile_attributes: { job_title: 'Designer' } } });
    const team = await t.admin.post('/rest/v2/teams', { name: 'Filters team', owner_uuids: [a.uuid], member_uuids: [b.uuid] });
    expect(team.status).toBe(201);
    const teamUuid = team.body.data.record.uuid;
    const ids = async (q: string) => (await listAll(t.admin, `/rest/v2/users?${q}`)).map((u) => u.uuid).sort();
    expect(await ids(`q[direct_teams_uuid_eq]=${teamUuid}`)).toEqual([a.uuid, b.uuid].sort());
    expect(await ids(`q[teams_uuid_eq]=${teamUuid}`)).toEqual([a.uuid, b.uuid].sort());
    expect(await ids(`q[direct_teams_name_eq]=Filters%20team&q[profile_job_title_cont]=staff`)).toEqual([a.uuid]);
    expect(await ids(`q[team_memberships_team_uuid_eq]=${teamUuid}&q[team_memberships_role_eq]=member`)).toEqual([b.uuid]);
    expect(await ids(`q[team_memberships_user_uuid_eq]=${b.uuid}`)).toEqual([b.uuid]);
    expect(await ids(`q[profile_job_title_in]=Designer,Nobody`)).toEqual([b.uuid]);
    const withoutTeams = await ids('q[direct_teams_uuid_null]=1&q[profile_job_title_present]=1');
    expect(withoutTeams).not.toContain(a.uuid);
  });

  it('members update only their own profile; viewers nothing; role/status admin-only', async () => {
    const m = await t.user({ role: 'member' });
    const v = await t.user({ role: 'viewer' });
    expect((await m.api.put(`/rest/v2/users/${m.uuid}`, { user: { display_name: 'Me' } })).status).toBe(200);
    expectError(await m.api.put(`/rest/v2/users/${m.uuid}`, { user: { role: 'admin' } }), 403, 'forbidden');
    expectError(await m.api.put(`/rest/v2/users/${v.uuid}`, { user: { display_name: 'x' } }), 403, 'forbidden');
    expectError(await v.api.put(`/rest/v2/users/${v.uuid}`, { user: { display_name: 'x' } }), 403, 'forbidden');
    expectError(await m.api.post('/rest/v2/users', { user: { email: 'z@example.test' } }), 403, 'forbidden');
    const list = await m.api.get('/rest/v2/users');
    expect(list.status).toBe(200);
    expect(list.body.data.checks.can_create).toBe(false);
  });

  it('an inactive user’s token stops working (401 in the contract shape)', async () => {
    const u = await t.user();
    expect((await u.api.get('/rest/v2/users')).status).toBe(200);
    expect((await t.admin.put(`/rest/v2/users/${u.uuid}`, { user: { status: 'inactive' } })).status).toBe(200);
    expectError(await u.api.get('/rest/v2/users'), 401, 'unauthorized');
  });

  it('isolates tenants: another tenant’s user is 404', async () => {
    expectError(await t.admin.get(`/rest/v2/users/${other.adminUuid}`), 404, 'not_found');
    expectError(await t.admin.put(`/rest/v2/users/${other.adminUuid}`, { user: { display_name: 'x' } }), 404, 'not_found');
    const all = await listAll(t.admin, '/rest/v2/users');
    expect(all.some((u) => u.uuid === other.adminUuid)).toBe(false);
  });

  it('rejects missing and forged tokens as the API Gateway authorizer does', async () => {
    const anon = new Api(undefined);
    const res = await anon.get('/rest/v2/users');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Unauthorized' });
    expect(res.headers.get('www-authenticate')).toBeTruthy();
    const forged = new Api(`${t.admin.token!.slice(0, -4)}AAAA`);
    expect((await forged.get('/rest/v2/users')).status).toBe(401);
    const expired = new Api(await t.token(t.adminUuid, 1));
    await new Promise((r) => setTimeout(r, 2100));
    expect((await expired.get('/rest/v2/users')).status).toBe(401);
  });
});
