import { describe, expect, it, beforeAll } from 'vitest';
import { Api, expectError, listAll, newTenant, type TenantFixture } from '../support/api.ts';

describe('users', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  beforeAll(async () => {
    t = await newTenant();
    other = await newTenant();
  });

  it('creates, gets, lists and updates a user with every record field', async () => {
    const res = await t.admin.post('/rest/v2/users', { user: { email: 'Ada.Lovelace@Example.test', profile_attributes: { job_title: 'Engineer' } } });
    expect(res.status).toBe(201);
    const rec = res.body.data.record;
    expect(res.body.data.type).toBe('user');
    expect(res.body.data.access_source).toBe('admin');
    expect(res.body.data.checks.can_update).toBe(true);
    expect(rec).toMatchObject({ email: 'Ada.Lovelace@Example.test', display_name: 'Ada.Lovelace', status: 'active', role: 'member', manager_uuid: null, account_id: null, path: null, license_type: 'full', display_name_source: 'manual', avatar_url: null, external_employee_id: null, creator_uuid: t.adminUuid });
    const got = await t.admin.get(`/rest/v2/users/${rec.uuid}`);
    expect(got.status).toBe(200);
    expect(got.body.data.record).toEqual(rec);
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
    const unknown = expectError(await t.admin.post('/rest/v2/users', { user: { email: 'x@example.test', tenant_uuid: 'x' } }), 400, 'bad_request');
    expect(unknown.details.map((d) => d.field)).toContain('user.tenant_uuid');
    expectError(await t.admin.post('/rest/v2/users', { user: { email: 42 } }), 400, 'bad_request');
    expectError(await t.admin.request('POST', '/rest/v2/users', '{not json', { 'content-type': 'application/json' }), 400, 'bad_request');
    expectError(await t.admin.post('/rest/v2/users', { user: { email: 'not-an-email' } }), 422, 'validation_failed');
    expectError(await t.admin.post('/rest/v2/users', { user: {} }), 400, 'bad_request');
    // an enum given another JSON type is a wrong type (400); a string outside the enum breaks a rule (422)
    expectError(await t.admin.post('/rest/v2/users', { user: { email: 'r@example.test', role: 5 } }), 400, 'bad_request');
    expectError(await t.admin.post('/rest/v2/users', { user: { email: 'r@example.test', role: 'boss' } }), 422, 'validation_failed');
  });

  it('validates manager_uuid: must exist in the tenant, no cycles', async () => {
    const a = await t.user();
    const b = await t.user({ extra: { manager_uuid: a.uuid } });
    expect(b.record.manager_uuid).toBe(a.uuid);
    expectError(await t.admin.put(`/rest/v2/users/${a.uuid}`, { user: { manager_uuid: b.uuid } }), 422, 'validation_failed');
    expectError(await t.admin.post('/rest/v2/users', { user: { email: 'm@example.test', manager_uuid: other.adminUuid } }), 422, 'validation_failed');
    const reports = await listAll(t.admin, `/rest/v2/users?q[manager_uuid_eq]=${a.uuid}`);
    expect(reports.map((u) => u.uuid)).toEqual([b.uuid]);
    const byManagerName = await listAll(t.admin, `/rest/v2/users?q[manager_display_name_eq]=${encodeURIComponent(a.record.display_name)}`);
    expect(byManagerName.map((u) => u.uuid)).toEqual([b.uuid]);
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
    const forged = new Api(t.admin.token!.slice(0, -4) + 'AAAA');
    expect((await forged.get('/rest/v2/users')).status).toBe(401);
    const expired = new Api(await t.token(t.adminUuid, 1));
    await new Promise((r) => setTimeout(r, 2100));
    expect((await expired.get('/rest/v2/users')).status).toBe(401);
  });
});
