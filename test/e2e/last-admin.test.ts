import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Api, expectError, listAll, newTenant, type Res, type TenantFixture } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';
import { RACE_TIMEOUT_MS } from './trees.fixture.ts';

/**
 * A tenant always keeps an active admin (contract section 19): demoting or deactivating its last one is 409
 * `last_admin` by every door (REST, SCIM, a user's token, a service account's `directory:write` or `scim` token),
 * and exactly so under concurrency: of two requests removing the last two admins at once, one is refused.
 */

const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const SCIM_TYPE = { 'content-type': 'application/scim+json' };

/** A service account of the tenant with `scopes`, and a client holding its token. */
async function serviceToken(t: TenantFixture, scopes: string[]): Promise<Api> {
  const a = (await t.admin.post('/service_accounts', { name: `directory ${randomUUID().slice(0, 8)}`, scopes })).body.data.record;
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: a.client_id, client_secret: a.client_secret });
  const res = await new Api(undefined).request('POST', '/oauth/token', form.toString(), {
    'content-type': 'application/x-www-form-urlencoded',
  });
  expect(res.status).toBe(200);
  return new Api(res.body.access_token);
}

function expectLastAdmin(res: Res, field: 'role' | 'status') {
  const e = expectError(res, 409, 'last_admin');
  expect(e.details).toEqual([{ field, code: 'last_admin', message: expect.any(String) }]);
}

function expectScimLastAdmin(res: Res) {
  expect([res.status, res.body?.status, res.body?.schemas]).toEqual([409, '409', [ERROR]]);
  expect(res.body.detail).toContain('active admin');
  expect(res.headers.get('content-type')).toContain('application/scim+json');
}

/** The ways a door takes a user out of the tenant's active admins. */
type Removal = (api: Api, uuid: string) => Promise<Res>;
const scimUser = (email: string, active: boolean) => ({ schemas: [USER], userName: email, active });
const removals: Record<string, Removal> = {
  'REST role member': (api, uuid) => api.put(`/rest/v2/users/${uuid}`, { user: { role: 'member' } }),
  'REST role viewer': (api, uuid) => api.put(`/rest/v2/users/${uuid}`, { user: { role: 'viewer' } }),
  'REST status inactive': (api, uuid) => api.put(`/rest/v2/users/${uuid}`, { user: { status: 'inactive' } }),
  'SCIM PATCH active false': (api, uuid) =>
    api.request(
      'PATCH',
      `/scim/v2/Users/${uuid}`,
      { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] },
      SCIM_TYPE,
    ),
  'SCIM PATCH path active False (Entra ID)': (api, uuid) =>
    api.request(
      'PATCH',
      `/scim/v2/Users/${uuid}`,
      { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] },
      SCIM_TYPE,
    ),
  'SCIM PUT active false': async (api, uuid) => {
    const current = await api.get(`/scim/v2/Users/${uuid}`);
    return api.request('PUT', `/scim/v2/Users/${uuid}`, scimUser(current.body.userName, false), SCIM_TYPE);
  },
  'SCIM DELETE': (api, uuid) => api.request('DELETE', `/scim/v2/Users/${uuid}`),
};
const isScim = (way: string) => way.startsWith('SCIM');

const activeAdmins = async (api: Api) =>
  (await listAll(api, '/rest/v2/users?q[role_eq]=admin&q[status_eq]=active')).map((u) => u.uuid as string);
const userOf = async (api: Api, uuid: string) => (await api.get(`/rest/v2/users/${uuid}`)).body.data.record;

describe('a tenant always keeps an active admin (contract section 19)', () => {
  it('refuses demoting or deactivating the last active admin through every door, changing nothing', async () => {
    const t = await newTenant();
    const directory = await serviceToken(t, ['directory:read', 'directory:write', 'scim']);
    const scimOnly = await serviceToken(t, ['scim']);
    for (const [way, remove] of Object.entries(removals)) {
      const api = isScim(way) && way.includes('PATCH') ? scimOnly : directory;
      const res = await remove(api, t.adminUuid);
      if (isScim(way)) expectScimLastAdmin(res);
      else expectLastAdmin(res, way.includes('status') ? 'status' : 'role');
      const admin = await userOf(directory, t.adminUuid);
      expect([way, admin.role, admin.status]).toEqual([way, 'admin', 'active']);
    }
    // the admin's own token keeps working as an admin's, and its own lock-out stays the rule it was
    expect((await t.admin.get('/service_accounts')).status).toBe(200);
    expectError(await t.admin.put(`/rest/v2/users/${t.adminUuid}`, { user: { role: 'member' } }), 422, 'validation_failed');
    // what does not take an admin away is not refused: a profile change, the role and status it has
    const same = await directory.put(`/rest/v2/users/${t.adminUuid}`, { user: { role: 'admin', status: 'active', display_name: 'Boss' } });
    expect([same.status, same.body.data.record.display_name]).toEqual([200, 'Boss']);

    // with a second admin, either may go; then the one left is the last
    const second = await directory.post('/rest/v2/users', {
      user: { email: `second-${randomUUID().slice(0, 8)}@example.test`, role: 'admin' },
    });
    expect(second.status).toBe(201);
    // the token's account, then the user beside the tenant's admins (one BatchGetItem), then the transaction
    const demoted = await directory.put(`/rest/v2/users/${t.adminUuid}`, { user: { role: 'member' } });
    expect([demoted.status, demoted.headers.get('x-db-round-trips')]).toEqual([200, '3']);
    expectLastAdmin(await directory.put(`/rest/v2/users/${second.body.data.record.uuid}`, { user: { status: 'inactive' } }), 'status');
    // an inactive admin made active again is an admin again: the one left may then go
    const back = await directory.put(`/rest/v2/users/${t.adminUuid}`, { user: { role: 'admin' } });
    expect(back.status).toBe(200);
    expect((await directory.put(`/rest/v2/users/${second.body.data.record.uuid}`, { user: { status: 'inactive' } })).status).toBe(200);
    expectLastAdmin(await directory.put(`/rest/v2/users/${t.adminUuid}`, { user: { role: 'viewer' } }), 'role');
    await eventually(async () => expect(await activeAdmins(directory)).toEqual([t.adminUuid]));
  });

  it('counts a deactivated admin out and a reactivated one back in', async () => {
    const t = await newTenant();
    const directory = await serviceToken(t, ['directory:read', 'directory:write']);
    const other = await t.user({ role: 'admin' });
    expect((await directory.put(`/rest/v2/users/${other.uuid}`, { user: { status: 'inactive' } })).status).toBe(200);
    expectLastAdmin(await directory.put(`/rest/v2/users/${t.adminUuid}`, { user: { status: 'inactive' } }), 'status');
    expect((await directory.put(`/rest/v2/users/${other.uuid}`, { user: { status: 'active' } })).status).toBe(200);
    expect((await directory.put(`/rest/v2/users/${t.adminUuid}`, { user: { status: 'inactive' } })).status).toBe(200);
    expectError(await t.admin.get('/rest/v2/users'), 401, 'unauthorized');
    expectLastAdmin(await directory.put(`/rest/v2/users/${other.uuid}`, { user: { role: 'member' } }), 'role');
  });

  it(
    'of two requests removing the last two admins at once, exactly one succeeds, by any pair of doors (many rounds)',
    async () => {
      const t = await newTenant();
      const directory = await serviceToken(t, ['directory:read', 'directory:write', 'scim']);
      const ways = Object.keys(removals);
      let survivor = t.adminUuid;
      for (let round = 0; round < 28; round++) {
        const made = await directory.post('/rest/v2/users', {
          user: { email: `race-${randomUUID().slice(0, 8)}@example.test`, role: 'admin' },
        });
        expect(made.status).toBe(201);
        const pair = [survivor, made.body.data.record.uuid as string];
        const [wayA, wayB] = [ways[round % ways.length]!, ways[(round + 1 + Math.floor(round / ways.length)) % ways.length]!];
        const answers = await Promise.all([removals[wayA]!(directory, pair[0]!), removals[wayB]!(directory, pair[1]!)]);
        const ok = answers.map((r) => r.status < 300);
        expect(ok.filter(Boolean), `round ${round}: ${wayA} / ${wayB}: ${answers.map((r) => r.status)}`).toHaveLength(1);
        const refused = ok.indexOf(false);
        const res = answers[refused]!;
        if (isScim([wayA, wayB][refused]!)) expectScimLastAdmin(res);
        else expect([res.status, res.body.error.code]).toEqual([409, 'last_admin']);
        // the refused one is the tenant's one active admin, as read by id
        const [a, b] = await Promise.all(pair.map((uuid) => userOf(directory, uuid)));
        expect([a, b].map((u) => u.role === 'admin' && u.status === 'active')).toEqual(pair.map((_, i) => i === refused));
        survivor = pair[refused]!;
      }
      // the list (an index, which may lag the writes: contract 14) comes to name the survivor alone
      await eventually(async () => expect(await activeAdmins(directory)).toEqual([survivor]));
    },
    RACE_TIMEOUT_MS,
  );

  it(
    'two admins demoting each other at once never both succeed (many rounds)',
    async () => {
      const t = await newTenant();
      const directory = await serviceToken(t, ['directory:read', 'directory:write']);
      let survivor = { uuid: t.adminUuid, api: t.admin };
      for (let round = 0; round < 12; round++) {
        const made = await directory.post('/rest/v2/users', {
          user: { email: `pair-${randomUUID().slice(0, 8)}@example.test`, role: 'admin' },
        });
        const other = { uuid: made.body.data.record.uuid as string, api: new Api(await t.token(made.body.data.record.uuid)) };
        const change = round % 2 ? { status: 'inactive' } : { role: 'member' };
        const answers = await Promise.all([
          survivor.api.put(`/rest/v2/users/${other.uuid}`, { user: change }),
          other.api.put(`/rest/v2/users/${survivor.uuid}`, { user: change }),
        ]);
        // one goes through; the other is refused: the last admin (409), or no admin any more by the time it is read (403, 401)
        expect(
          answers.filter((r) => r.status < 300),
          `round ${round}: ${answers.map((r) => r.status)}`,
        ).toHaveLength(1);
        for (const r of answers.filter((x) => x.status >= 300)) expect([401, 403, 409]).toContain(r.status);
        const [a, b] = await Promise.all([survivor.uuid, other.uuid].map((uuid) => userOf(directory, uuid)));
        const standing = [a, b].map((u) => u.role === 'admin' && u.status === 'active');
        expect(standing.filter(Boolean)).toHaveLength(1);
        survivor = standing[0] ? survivor : other;
      }
    },
    RACE_TIMEOUT_MS,
  );

  it('keeps the rule in a tenant whose admins were there before the rule was kept (no list of them stored yet)', async () => {
    // a tenant's first admin is written with the tenant, and its first change by a service account finds no stored
    // list: it is built from the tenant's users, read by id
    const t = await newTenant();
    const directory = await serviceToken(t, ['directory:read', 'directory:write']);
    expectLastAdmin(await directory.put(`/rest/v2/users/${t.adminUuid}`, { user: { role: 'member' } }), 'role');
    const other = await newTenant();
    const scim = await serviceToken(other, ['scim']);
    expectScimLastAdmin(await removals['SCIM DELETE']!(scim, other.adminUuid));
  });
});
