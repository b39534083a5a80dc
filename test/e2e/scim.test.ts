import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { type Api, expectError, newTenant, type Res, type TenantFixture } from '../support/api.ts';
import { withinListLag } from '../support/list-lag.ts';
import { rawRequest } from '../support/raw-http.ts';

/**
 * SCIM 2.0 provisioning (contract section 17): the request sequences Okta and Microsoft Entra ID document, sent
 * as they send them, then filters, paging, errors and tenancy. Every answer is checked against docs/openapi.json
 * by the Api client (SCIM's paths: application/scim+json, errors in SCIM's shape).
 */

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const SCIM_TYPE = { 'content-type': 'application/scim+json' };

/** A SCIM client: the Api's checks, bodies sent as application/scim+json as identity providers send them. */
const scim = (api: Api) => ({
  get: (path: string) => api.request('GET', `/scim/v2${path}`),
  post: (path: string, body: unknown) => api.request('POST', `/scim/v2${path}`, body, SCIM_TYPE),
  put: (path: string, body: unknown) => api.request('PUT', `/scim/v2${path}`, body, SCIM_TYPE),
  patch: (path: string, body: unknown) => api.request('PATCH', `/scim/v2${path}`, body, SCIM_TYPE),
  delete: (path: string) => api.request('DELETE', `/scim/v2${path}`),
});

/** Asserts SCIM's error shape (RFC 7644 3.12) and its content type. */
function expectScimError(res: Res, status: number, scimType?: string) {
  if (res.status !== status || (scimType && res.body?.scimType !== scimType))
    throw new Error(`expected ${status}${scimType ? ` ${scimType}` : ''}, got ${res.status}: ${JSON.stringify(res.body)}`);
  expect(res.body.schemas).toEqual([ERROR]);
  expect(res.body.status).toBe(String(status));
  expect(typeof res.body.detail).toBe('string');
  expect(res.headers.get('content-type')).toContain('application/scim+json');
  return res.body as { detail: string; scimType?: string };
}

/** The stack's own URL: the configured base every meta.location starts with (RFC 7643 3.1: absolute). */
const base = inject('apiUrl');

const q = (filter: string, extra = '') => `?filter=${encodeURIComponent(filter)}${extra}`;

describe('SCIM provisioning', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  let s: ReturnType<typeof scim>;
  beforeAll(async () => {
    [t, other] = await Promise.all([newTenant(), newTenant()]);
    s = scim(t.admin);
  });

  it("replays Okta's documented user sequence: filter, create, get, replace, deactivate by PATCH", async () => {
    const email = `okta.${randomUUID().slice(0, 8)}@okta.local`;
    // 1. Okta looks the user up first
    const none = await s.get(`/Users${q(`userName eq "${email}"`, '&startIndex=1&count=100')}`);
    expect(none.status).toBe(200);
    expect(none.headers.get('content-type')).toContain('application/scim+json');
    expect(none.body).toEqual({ schemas: [LIST], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });
    // 2. then creates it, with attributes this service does not map (locale, password, groups)
    const created = await s.post('/Users', {
      schemas: [USER],
      userName: email,
      name: { givenName: 'Test', familyName: 'User' },
      emails: [{ primary: true, value: email, type: 'work' }],
      displayName: 'Test User',
      locale: 'en-US',
      externalId: '00ujl29u0le5T6Aj10h7',
      groups: [],
      password: '1mz050nq',
      active: true,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body).toMatchObject({
      schemas: [USER],
      userName: email,
      externalId: '00ujl29u0le5T6Aj10h7',
      name: { givenName: 'Test', familyName: 'User', formatted: 'Test User' },
      displayName: 'Test User',
      emails: [{ value: email, type: 'work', primary: true }],
      active: true,
      meta: { resourceType: 'User', location: `${base}/scim/v2/Users/${id}` },
    });
    expect(created.headers.get('location')).toBe(`${base}/scim/v2/Users/${id}`);
    // the REST record is the same user
    const rest = (await t.admin.get(`/rest/v2/users/${id}`)).body.data.record;
    expect(rest).toMatchObject({
      email,
      display_name: 'Test User',
      status: 'active',
      profile_attributes: { first_name: 'Test', last_name: 'User' },
    });
    // 3. reads it back, and finds it by userName in any letter case
    expect((await s.get(`/Users/${id}`)).body).toEqual(created.body);
    const found = await s.get(`/Users${q(`userName eq "${email.toUpperCase()}"`, '&startIndex=1&count=100')}`);
    expect(found.body).toMatchObject({ totalResults: 1, itemsPerPage: 1, Resources: [{ id }] });
    // 4. PUT with a changed name
    const put = await s.put(`/Users/${id}`, {
      schemas: [USER],
      id,
      userName: email,
      name: { givenName: 'Another', familyName: 'User' },
      emails: [{ primary: true, value: email, type: 'work' }],
      displayName: 'Another User',
      externalId: '00ujl29u0le5T6Aj10h7',
      active: true,
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: { givenName: 'Another', familyName: 'User' }, displayName: 'Another User', active: true });
    // 5. deactivation: PATCH replace with a value object and no path
    const off = await s.patch(`/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
    expect(off.status).toBe(200);
    expect(off.body.active).toBe(false);
    expect((await t.admin.get(`/rest/v2/users/${id}`)).body.data.record.status).toBe('inactive');
    // reactivation by PUT, as Okta does on re-assignment
    const on = await s.put(`/Users/${id}`, { schemas: [USER], userName: email, displayName: 'Another User', active: true });
    expect(on.body.active).toBe(true);
    expect((await t.admin.get(`/rest/v2/users/${id}`)).body.data.record.status).toBe('active');
  });

  it("replays Okta's group sequence: create, add a member, rename, remove the member by filter, delete", async () => {
    const [a, b] = await Promise.all([t.user(), t.user()]);
    const name = `Okta group ${randomUUID().slice(0, 8)}`;
    const created = await s.post('/Groups', { schemas: [GROUP], displayName: name, members: [] });
    expect(created.status).toBe(201);
    const gid = created.body.id as string;
    expect(created.body).toMatchObject({
      schemas: [GROUP],
      displayName: name,
      members: [],
      meta: { resourceType: 'Group', location: `${base}/scim/v2/Groups/${created.body.id}` },
    });
    expect(created.headers.get('location')).toBe(`${base}/scim/v2/Groups/${created.body.id}`);
    // a filter walks the list: it reflects the create within 2 s (contract 14)
    await withinListLag(async () =>
      expect((await s.get(`/Groups${q(`displayName eq "${name}"`)}`)).body).toMatchObject({ totalResults: 1, Resources: [{ id: gid }] }),
    );
    const added = await s.patch(`/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'add', path: 'members', value: [{ value: a.uuid, display: a.record.email }, { value: b.uuid }] }],
    });
    expect(added.status).toBe(200);
    expect(added.body.members.map((m: { value: string }) => m.value).sort()).toEqual([a.uuid, b.uuid].sort());
    expect(added.body.members.find((m: { value: string }) => m.value === a.uuid).display).toBe(a.record.display_name);
    expect((await t.admin.get(`/rest/v2/teams/${gid}`)).body.data.record.member_uuids.sort()).toEqual([a.uuid, b.uuid].sort());
    const renamed = await s.patch(`/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'replace', value: { id: gid, displayName: `${name} renamed` } }],
    });
    expect(renamed.body.displayName).toBe(`${name} renamed`);
    const removed = await s.patch(`/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'remove', path: `members[value eq "${a.uuid}"]` }],
    });
    expect(removed.body.members.map((m: { value: string }) => m.value)).toEqual([b.uuid]);
    const team = (await t.admin.get(`/rest/v2/teams/${gid}`)).body.data.record;
    expect(team).toMatchObject({ name: `${name} renamed`, member_uuids: [b.uuid] });
    const del = await s.delete(`/Groups/${gid}`);
    expect(del.status).toBe(204);
    expectError(await t.admin.get(`/rest/v2/teams/${gid}`), 404, 'not_found');
    expectScimError(await s.get(`/Groups/${gid}`), 404);
  });

  it('replays Entra ID\'s documented sequence: filter, create, PATCH with Replace and "False", DELETE deactivates', async () => {
    const email = `Test_User_${randomUUID()}@testuser.com`;
    expect((await s.get(`/Users${q(`userName eq "${email}"`)}`)).body.totalResults).toBe(0);
    const created = await s.post('/Users', {
      schemas: [USER, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
      externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
      userName: email,
      active: true,
      emails: [{ primary: true, type: 'work', value: email }],
      meta: { resourceType: 'User' },
      name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
      roles: [],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body).toMatchObject({ userName: email, displayName: 'givenName familyName', active: true });
    expect((await s.get(`/Users${q(`userName eq "${email}"`)}`)).body.Resources.map((u: { id: string }) => u.id)).toEqual([id]);
    // Entra ID's attribute update, capitalised ops, an extension attribute this service ignores
    const updated = await s.patch(`/Users/${id}`, {
      schemas: [PATCH],
      Operations: [
        { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
        { op: 'Add', path: 'displayName', value: 'Updated Name' },
        { op: 'Replace', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'Eng' },
      ],
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: { givenName: 'givenName', familyName: 'updatedFamilyName' }, displayName: 'Updated Name' });
    // Entra ID disables with a string
    const off = await s.patch(`/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    expect(off.status).toBe(200);
    expect(off.body.active).toBe(false);
    const on = await s.patch(`/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'True' }] });
    expect(on.body.active).toBe(true);
    // DELETE deprovisions: the user stays, inactive
    const del = await s.delete(`/Users/${id}`);
    expect(del.status).toBe(204);
    expect((await s.get(`/Users/${id}`)).body.active).toBe(false);
    expect((await t.admin.get(`/rest/v2/users/${id}`)).body.data.record).toMatchObject({ email, status: 'inactive' });
  });

  it("replays Entra ID's group sequence: create, filter without members, Add and Remove members, Replace displayName, DELETE", async () => {
    const [a, b] = await Promise.all([t.user(), t.user()]);
    const name = `displayName ${randomUUID().slice(0, 8)}`;
    const created = await s.post('/Groups', {
      schemas: [GROUP, 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group'],
      externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
      displayName: name,
      meta: { resourceType: 'Group' },
    });
    expect(created.status).toBe(201);
    const gid = created.body.id as string;
    // a filter walks the list: it reflects the create within 2 s (contract 14)
    await withinListLag(async () => {
      const listed = await s.get(`/Groups${q(`displayName eq "${name}"`, '&excludedAttributes=members')}`);
      expect(listed.body.Resources).toEqual([
        { schemas: [GROUP], id: gid, externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159', displayName: name, meta: created.body.meta },
      ]);
    });
    const add = await s.patch(`/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [
        {
          op: 'Add',
          path: 'members',
          value: [
            { $ref: null, value: a.uuid },
            { $ref: null, value: b.uuid.toUpperCase() },
          ],
        },
      ],
    });
    expect(add.status).toBe(200);
    expect(add.body.members.map((m: { value: string }) => m.value).sort()).toEqual([a.uuid, b.uuid].sort());
    const remove = await s.patch(`/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: a.uuid }] }],
    });
    expect(remove.body.members.map((m: { value: string }) => m.value)).toEqual([b.uuid]);
    const rename = await s.patch(`/Groups/${gid}`, {
      schemas: [PATCH],
      Operations: [{ op: 'Replace', path: 'displayName', value: `${name}updated` }],
    });
    expect(rename.body.displayName).toBe(`${name}updated`);
    expect((await t.admin.get(`/rest/v2/teams/${gid}`)).body.data.record).toMatchObject({ name: `${name}updated`, member_uuids: [b.uuid] });
    expect((await s.delete(`/Groups/${gid}`)).status).toBe(204);
    // the filter reflects the delete within 2 s (contract 14)
    await withinListLag(async () =>
      expect((await s.get(`/Groups${q(`externalId eq "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159"`)}`)).body.totalResults).toBe(0),
    );
  });

  it("keeps a deactivated user's goals and check-ins, and its REST record and token show it deactivated", async () => {
    const u = await t.user({ role: 'member' });
    const period = (await t.admin.post('/rest/v2/time_periods', { name: 'Q1', start_date: '2025-01-01', end_date: '2025-03-31' })).body.data
      .record;
    const goal = await u.api.post('/rest/v2/objectives', {
      title: 'Stays after deprovisioning',
      time_period_uuid: period.uuid,
      owner_uuids: [u.uuid],
    });
    expect(goal.status).toBe(201);
    const goalUuid = goal.body.data.record.uuid as string;
    const checkin = await u.api.post('/rest/v2/checkins', {
      goal_uuid: goalUuid,
      value: 1,
      status: 'on_track',
      checkin_date: '2025-02-01',
    });
    expect(checkin.status).toBe(201);
    expect(
      (await s.patch(`/Users/${u.uuid}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] })).status,
    ).toBe(200);
    expect((await t.admin.get(`/rest/v2/users/${u.uuid}`)).body.data.record.status).toBe('inactive');
    // the deactivated user's token is refused by the service, as for any inactive user
    expectError(await u.api.get('/rest/v2/objectives'), 401, 'unauthorized');
    expect((await t.admin.get(`/rest/v2/objectives/${goalUuid}`)).body.data.record).toMatchObject({
      uuid: goalUuid,
      owner_uuids: [u.uuid],
    });
    expect((await t.admin.get(`/rest/v2/checkins/${checkin.body.data.record.uuid}`)).status).toBe(200);
  });

  it('filters with eq, co and sw on userName, externalId and displayName, and pages with startIndex and count', async () => {
    const tag = randomUUID().slice(0, 8);
    const made: string[] = [];
    for (const i of [1, 2, 3]) {
      const res = await s.post('/Users', {
        schemas: [USER],
        userName: `pg${tag}-${i}@example.test`,
        displayName: `Pager ${tag} ${i}`,
        externalId: `ext-${tag}-${i}`,
      });
      expect(res.status).toBe(201);
      made.push(res.body.id);
    }
    const ids = (r: Res) => r.body.Resources.map((u: { id: string }) => u.id);
    // filters and the list reflect the creates within 2 s (contract 14): each read waits that long at most
    const filtered = (filter: string, extra = '') => s.get(`/Users${q(filter, extra)}`);
    const expectIds = (filter: string, want: string[]) => withinListLag(async () => expect(ids(await filtered(filter))).toEqual(want));
    await withinListLag(async () => {
      const co = await filtered(`userName co "${tag}"`);
      expect(co.body).toMatchObject({ totalResults: 3, startIndex: 1, itemsPerPage: 3 });
      expect(ids(co)).toEqual(made);
    });
    // the second page of one
    await withinListLag(async () => {
      const paged = await filtered(`userName co "${tag}"`, '&startIndex=2&count=1');
      expect(paged.body).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 });
      expect(ids(paged)).toEqual([made[1]]);
    });
    await expectIds(`userName sw "PG${tag}-2"`, [made[1]]);
    await expectIds(`displayName sw "pager ${tag}"`, made);
    await expectIds(`displayName eq "Pager ${tag} 3"`, [made[2]]);
    await expectIds(`externalId eq "ext-${tag}-2"`, [made[1]]);
    // externalId is case-exact (RFC 7643)
    expect((await filtered(`externalId eq "EXT-${tag}-2"`)).body.totalResults).toBe(0);
    await expectIds(`externalId co "${tag}-3"`, [made[2]]);
    // an attribute name in any letter case, or after the schema URN
    await expectIds(`USERNAME eq "pg${tag}-1@example.test"`, [made[0]]);
    await expectIds(`${USER}:userName eq "pg${tag}-1@example.test"`, [made[0]]);
    // the whole list, paged: count=0 gives the total only (the admin and at least the three); attributes keeps
    // what is asked for
    const total = await withinListLag(async () => {
      const body = (await s.get('/Users?count=0')).body;
      expect(body).toMatchObject({ itemsPerPage: 0, Resources: [] });
      expect(body.totalResults).toBeGreaterThanOrEqual(4);
      return body;
    });
    const last = await s.get(`/Users?startIndex=${total.totalResults}&count=5&attributes=userName`);
    expect(last.body).toMatchObject({ totalResults: total.totalResults, startIndex: total.totalResults, itemsPerPage: 1 });
    expect(Object.keys(last.body.Resources[0]).sort()).toEqual(['id', 'schemas', 'userName']);
    const all = await s.get(`/Users?startIndex=-4&count=1000`);
    expect(all.body.startIndex).toBe(1);
    expect(all.body.itemsPerPage).toBe(Math.min(100, total.totalResults));
  });

  it('refuses other filters with invalidFilter, bad bodies, a taken userName, a non-admin, with nothing written', async () => {
    for (const filter of [
      'userName ne "x"',
      'userName pr',
      'title eq "x"',
      'userName eq "a" or userName eq "b"',
      'emails[type eq "work"]',
      'userName eq',
      '(((',
    ]) {
      const err = expectScimError(await s.get(`/Users${q(filter)}`), 400, 'invalidFilter');
      expect(err.detail.length).toBeGreaterThan(0);
    }
    expectScimError(await s.get(`/Groups${q('members eq "x"')}`), 400, 'invalidFilter');
    expectScimError(await s.get('/Users?startIndex=abc'), 400, 'invalidValue');
    const email = `taken.${randomUUID().slice(0, 8)}@example.test`;
    expect((await s.post('/Users', { schemas: [USER], userName: email })).status).toBe(201);
    const taken = expectScimError(await s.post('/Users', { schemas: [USER], userName: email.toUpperCase() }), 409, 'uniqueness');
    expect(taken.detail).toContain('already exists');
    expect((await s.get(`/Users${q(`userName eq "${email}"`)}`)).body.totalResults).toBe(1);
    // renaming another user to the taken address is refused too, and that user keeps its own
    const second = (await s.post('/Users', { schemas: [USER], userName: `second.${email}` })).body;
    expectScimError(await s.put(`/Users/${second.id}`, { schemas: [USER], userName: email }), 409, 'uniqueness');
    expect((await s.get(`/Users/${second.id}`)).body.userName).toBe(`second.${email}`);
    expectScimError(await s.post('/Users', { schemas: [USER] }), 400, 'invalidSyntax');
    expectScimError(await s.post('/Users', { schemas: [USER], userName: 'not an e-mail' }), 400, 'invalidValue');
    expectScimError(await s.post('/Users', { schemas: [USER], userName: 'x@example.test', active: 'maybe' }), 400);
    const u = (await s.get(`/Users${q(`userName eq "${email}"`)}`)).body.Resources[0];
    expectScimError(
      await s.patch(`/Users/${u.id}`, { schemas: [PATCH], Operations: [{ op: 'move', path: 'active', value: false }] }),
      400,
      'invalidSyntax',
    );
    expectScimError(
      await s.patch(`/Users/${u.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: 'nope' }] }),
      400,
    );
    expect((await s.get(`/Users/${u.id}`)).body).toEqual(u);
    // a member's token is refused, the body not even read
    const member = await t.user({ role: 'member' });
    expectScimError(await scim(member.api).get('/Users'), 403);
    expectScimError(await scim(member.api).post('/Users', { nonsense: true }), 403);
    expectScimError(await s.get(`/Users/${randomUUID()}`), 404);
    // a group naming someone who is no user of the tenant
    expectScimError(
      await s.post('/Groups', { schemas: [GROUP], displayName: 'Bad', members: [{ value: randomUUID() }] }),
      400,
      'invalidValue',
    );
  });

  it("keeps the stack's process whole: a prototype name in any PATCH path or value key is 400 invalidPath, and another tenant is served as before", async () => {
    const email = `proto.${randomUUID().slice(0, 8)}@example.test`;
    const u = (await s.post('/Users', { schemas: [USER], userName: email, name: { givenName: 'Proto', familyName: 'Type' } })).body;
    // scim-patch splits a path, and each key of a value, on "." and at its last ":" (a URN prefix is one key), and
    // walks or creates each part: every part is checked, whatever the op and at whatever depth the key sits
    const hostile: Array<Record<string, unknown>> = [
      { op: 'add', value: { '__proto__.role': 'admin' } },
      { op: 'add', value: { 'constructor.prototype.role': 'admin' } },
      { op: 'add', value: { 'urn:x:__proto__.role': 'admin' } },
      { op: 'add', value: { '__proto__:role': 'admin' } },
      { op: 'replace', value: { 'name.__proto__.role': 'admin' } },
      { op: 'add', path: 'name', value: { 'constructor.prototype.role': 'admin' } },
      { op: 'add', value: { name: { 'x.y': { 'prototype.role': 'admin' } } } },
      { op: 'add', path: '__proto__.role', value: 'admin' },
      { op: 'add', path: 'constructor.prototype.role', value: 'admin' },
      { op: 'replace', path: 'urn:x:__proto__.role', value: 'admin' },
      { op: 'add', path: 'emails[type eq "work"].__proto__.role', value: 'admin' },
      { op: 'Add', path: 'name.constructor.prototype.role', value: 'admin' },
      // the key exactly a prototype name is refused by the body read itself, in SCIM's words too
      { op: 'add', value: { name: JSON.parse('{"__proto__":{"role":"admin"}}') } },
    ];
    for (const op of hostile) {
      const e = expectScimError(await s.patch(`/Users/${u.id}`, { schemas: [PATCH], Operations: [op] }), 400, 'invalidPath');
      expect(e.detail, JSON.stringify(op)).toMatch(/__proto__|constructor|prototype/);
    }
    // one hostile operation among good ones: the whole PATCH is refused, the good ones not applied either
    expectScimError(
      await s.patch(`/Users/${u.id}`, {
        schemas: [PATCH],
        Operations: [
          { op: 'replace', path: 'displayName', value: 'Renamed' },
          { op: 'add', value: { 'constructor.prototype.role': 'admin' } },
        ],
      }),
      400,
      'invalidPath',
    );
    // the stack's process was not touched: another tenant's user created without a role is a member (a polluted
    // prototype would make it an admin, or the request a 500), and a user's record has no inherited role either
    const theirEmail = `fresh.${randomUUID().slice(0, 8)}@example.test`;
    const created = await other.admin.post('/rest/v2/users', { user: { email: theirEmail } });
    expect(created.status).toBe(201);
    expect(created.body.data.record.role).toBe('member');
    expect((await other.admin.get(`/rest/v2/users/${created.body.data.record.uuid}`)).body.data.record.role).toBe('member');
    expect((await s.get(`/Users/${u.id}`)).body).toEqual(u);
    // and a PATCH that names nothing hostile still applies
    const renamed = await s.patch(`/Users/${u.id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'replace', path: 'displayName', value: 'Renamed' }],
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.displayName).toBe('Renamed');
  });

  it('refuses attribute names over 200 characters and PATCH bodies of more than 100 operations, before scim-patch runs', async () => {
    const email = `long.${randomUUID().slice(0, 8)}@example.test`;
    const u = (await s.post('/Users', { schemas: [USER], userName: email })).body;
    const long = 'a'.repeat(60_000);
    // scim-patch splits names with a regex quadratic in their length: a 60,000-character name took seconds
    for (const op of [
      { op: 'add', value: { [long]: 'x' } },
      { op: 'add', value: { [`${'a.'.repeat(30_000)}b`]: 'x' } },
      { op: 'add', value: { name: { [long]: 'x' } } },
      { op: 'add', path: `name.${'b'.repeat(201)}`, value: 'x' },
      { op: 'add', path: 'x'.repeat(201), value: 'x' },
    ]) {
      const e = expectScimError(await s.patch(`/Users/${u.id}`, { schemas: [PATCH], Operations: [op] }), 400, 'invalidPath');
      expect(e.detail).toContain('at most 200 characters');
    }
    // a path the body schema already bounds (1000 characters) is refused there, 400 too
    expectScimError(await s.patch(`/Users/${u.id}`, { schemas: [PATCH], Operations: [{ op: 'add', path: long, value: 'x' }] }), 400);
    // 200 characters is still a name
    const fine = await s.patch(`/Users/${u.id}`, { schemas: [PATCH], Operations: [{ op: 'add', value: { ['c'.repeat(200)]: 'x' } }] });
    expect(fine.status).toBe(200);
    // any key of a SCIM body is an attribute name: a user or group with one too long is refused, nothing created
    const refusedEmail = `long.refused.${randomUUID().slice(0, 8)}@example.test`;
    for (const [path, body] of [
      ['/Users', { schemas: [USER], userName: refusedEmail, ['x'.repeat(201)]: 'x' }],
      ['/Users', { schemas: [USER], userName: refusedEmail, name: { givenName: 'A', [long]: 'x' } }],
      ['/Groups', { schemas: [GROUP], displayName: 'Long names', [`urn:x:${long}`]: 'x' }],
    ] as const)
      expect(expectScimError(await s.post(path, body), 400, 'invalidPath').detail).toContain('at most 200 characters');
    expect((await s.get(`/Users${q(`userName eq "${refusedEmail}"`)}`)).body.totalResults).toBe(0);
    expect((await s.get(`/Groups${q('displayName eq "Long names"')}`)).body.totalResults).toBe(0);
    const op = { op: 'replace', path: 'displayName', value: 'Many' };
    expectScimError(await s.patch(`/Users/${u.id}`, { schemas: [PATCH], Operations: Array(101).fill(op) }), 400, 'invalidValue');
    expect((await s.get(`/Users/${u.id}`)).body.displayName).not.toBe('Many');
    expect((await s.patch(`/Users/${u.id}`, { schemas: [PATCH], Operations: Array(100).fill(op) })).body.displayName).toBe('Many');
  });

  it("never reaches another tenant: its users and teams are 404 in SCIM's shape and never listed", async () => {
    const theirs = await other.user({ email: `theirs.${randomUUID().slice(0, 8)}@example.test` });
    const theirTeam = (
      await other.admin.post('/rest/v2/teams', { name: `Theirs ${randomUUID().slice(0, 6)}`, member_uuids: [theirs.uuid] })
    ).body.data.record;
    expectScimError(await s.get(`/Users/${theirs.uuid}`), 404);
    expectScimError(await s.put(`/Users/${theirs.uuid}`, { schemas: [USER], userName: theirs.record.email, active: false }), 404);
    expectScimError(
      await s.patch(`/Users/${theirs.uuid}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] }),
      404,
    );
    expectScimError(await s.delete(`/Users/${theirs.uuid}`), 404);
    expectScimError(await s.get(`/Groups/${theirTeam.uuid}`), 404);
    expectScimError(await s.delete(`/Groups/${theirTeam.uuid}`), 404);
    expect((await s.get(`/Users${q(`userName eq "${theirs.record.email}"`)}`)).body.totalResults).toBe(0);
    // their user as a member of one of ours: not a user of this tenant
    expectScimError(
      await s.post('/Groups', { schemas: [GROUP], displayName: 'Mixed', members: [{ value: theirs.uuid }] }),
      400,
      'invalidValue',
    );
    // and the same e-mail is free in this tenant (uniqueness is per tenant)
    expect((await s.post('/Users', { schemas: [USER], userName: theirs.record.email })).status).toBe(201);
    expect((await other.admin.get(`/rest/v2/users/${theirs.uuid}`)).body.data.record.status).toBe('active');
    expect((await other.admin.get(`/rest/v2/teams/${theirTeam.uuid}`)).status).toBe(200);
  });

  it('serves the discovery documents', async () => {
    const config = await s.get('/ServiceProviderConfig');
    expect(config.status).toBe(200);
    expect(config.body).toMatchObject({
      patch: { supported: true },
      filter: { supported: true, maxResults: 100 },
      bulk: { supported: false },
    });
    const types = await s.get('/ResourceTypes');
    expect(types.body.Resources.map((r: { name: string; endpoint: string }) => [r.name, r.endpoint])).toEqual([
      ['User', '/Users'],
      ['Group', '/Groups'],
    ]);
    const schemas = await s.get('/Schemas');
    expect(schemas.body.Resources.map((r: { id: string }) => r.id)).toEqual([USER, GROUP]);
    // absolute locations from the configured base URL
    expect(config.body.meta.location).toBe(`${base}/scim/v2/ServiceProviderConfig`);
    expect(types.body.Resources[0].meta.location).toBe(`${base}/scim/v2/ResourceTypes/User`);
    expect(schemas.body.Resources[0].meta.location).toBe(`${base}/scim/v2/Schemas/${USER}`);
    // served to an authenticated SCIM client only, as Okta and Entra ID call them (README, SCIM)
    for (const path of ['/ServiceProviderConfig', '/ResourceTypes', '/Schemas'])
      expect((await fetch(`${base}/scim/v2${path}`)).status, path).toBe(401);
  });

  it('names its resources by its configured URL, whatever Host and x-forwarded-proto a client sends', async () => {
    const res = await rawRequest(`${base}/scim/v2/Users`, {
      method: 'POST',
      headers: {
        host: 'attacker.example',
        'x-forwarded-proto': 'https',
        authorization: `Bearer ${t.admin.token}`,
        'content-type': 'application/scim+json',
      },
      body: JSON.stringify({ schemas: [USER], userName: `host.${randomUUID().slice(0, 8)}@example.test` }),
    });
    expect(res.status).toBe(201);
    const id = JSON.parse(res.body).id as string;
    expect(JSON.parse(res.body).meta.location).toBe(`${base}/scim/v2/Users/${id}`);
    expect(res.headers.location).toBe(`${base}/scim/v2/Users/${id}`);
  });
});
