import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { failedCredentialLimitsFromEnv } from '#shared/http/rate-limit.ts';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { Api, expectError, listAll, newTenant, type Res, type TenantFixture } from '../support/api.ts';
import { EVENTUALLY_MAX_MS } from '../support/eventually.ts';
import { withinListLag } from '../support/list-lag.ts';
import { deliveriesSettled, eventually, startReceiver } from './webhooks.fixture.ts';

/** POST /oauth/token with a form body (and HTTP Basic when `basic` is given). */
async function tokenRequest(form: Record<string, string> | string, basic?: { id: string; secret: string }): Promise<Res> {
  const body = typeof form === 'string' ? form : new URLSearchParams(form).toString();
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (basic)
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(basic.id)}:${encodeURIComponent(basic.secret)}`).toString('base64')}`;
  return new Api(undefined).request('POST', '/oauth/token', body, headers);
}

const credentials = (a: { client_id: string; client_secret: string }) => ({
  grant_type: 'client_credentials',
  client_id: a.client_id,
  client_secret: a.client_secret,
});

/** A token for the account, asserting the grant's answer. */
async function tokenFor(a: { client_id: string; client_secret: string }, scope?: string): Promise<Api> {
  const res = await tokenRequest({ ...credentials(a), ...(scope ? { scope } : {}) });
  expect(res.status).toBe(200);
  return new Api(res.body.access_token);
}

function expectOAuthError(res: Res, status: number, error: string) {
  expect({ status: res.status, error: res.body?.error }).toEqual({ status, error });
  expect(typeof res.body.error_description).toBe('string');
  expect(res.headers.get('cache-control')).toBe('no-store');
  if (status === 401) expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
}

function expectInsufficientScope(res: Res, scope: string) {
  expectError(res, 403, 'insufficient_scope');
  expect(res.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="${scope}"`);
}

describe('service accounts and the client credentials grant (contract section 17)', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  let period: { uuid: string };
  beforeAll(async () => {
    [t, other] = await Promise.all([newTenant(), newTenant()]);
    const p = await t.admin.post('/rest/v2/time_periods', { name: 'Q1', start_date: '2026-01-01', end_date: '2026-03-31' });
    expect(p.status).toBe(201);
    period = p.body.data.record;
  });

  type Account = { uuid: string; client_id: string; client_secret: string; scopes: string[]; status: string };
  const create = async (api: Api, body: unknown) => {
    const res = await api.post('/service_accounts', body);
    expect(res.status).toBe(201);
    return res.body.data.record as Account;
  };
  const rotate = async (uuid: string) => {
    const res = await t.admin.post(`/service_accounts/${uuid}/rotate_secret`);
    expect(res.status).toBe(200);
    return res.body.data.record as Account;
  };
  /** The operator's long-lived token of an account (issue-token --service-account). */
  const operatorToken = async (uuid: string) =>
    new Api(((await runAdmin(['issue-token', '--tenant', t.tenantUuid, '--service-account', uuid])) as { token: string }).token);

  it('lives its life: create, token, call, rotate, old secret refused, disable refuses its token at once, delete', async () => {
    const res = await t.admin.post('/service_accounts', { name: 'BI reader', scopes: ['goals:read', 'directory:read'] });
    expect(res.status).toBe(201);
    expect(res.body.data.type).toBe('service_account');
    const a = res.body.data.record;
    expect(Object.keys(a).sort()).toEqual(
      ['client_id', 'client_secret', 'created_at', 'name', 'scopes', 'secret_rotated_at', 'status', 'updated_at', 'uuid'].sort(),
    );
    expect(a).toMatchObject({ name: 'BI reader', scopes: ['goals:read', 'directory:read'], status: 'active' });
    expect(a.client_secret).toMatch(/^sas_[A-Za-z0-9_-]{43}$/);

    // the secret is shown once: never by get or list
    const got = await t.admin.get(`/service_accounts/${a.uuid}`);
    expect(got.status).toBe(200);
    expect(got.body.data.record).not.toHaveProperty('client_secret');
    expect(JSON.stringify(got.body)).not.toContain(a.client_secret);
    // the list reflects the create within 2 s (contract 14)
    await withinListLag(async () => {
      const listed = await listAll(t.admin, '/service_accounts');
      expect(listed.map((r) => r.uuid)).toContain(a.uuid);
      expect(JSON.stringify(listed)).not.toContain(a.client_secret);
    });

    // a token, in the body's credentials and by HTTP Basic alike
    const granted = await tokenRequest(credentials(a));
    expect(granted.status).toBe(200);
    expect(granted.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 900,
      scope: 'goals:read directory:read',
    });
    expect(granted.headers.get('cache-control')).toBe('no-store');
    const basic = await tokenRequest({ grant_type: 'client_credentials' }, { id: a.client_id, secret: a.client_secret });
    expect(basic.status).toBe(200);
    const sa = new Api(granted.body.access_token);

    // it reads goals and the directory, and is refused a write with insufficient_scope
    expect((await sa.get('/rest/v2/objectives')).status).toBe(200);
    expect((await sa.get('/rest/v2/users')).status).toBe(200);
    expectInsufficientScope(await sa.post('/rest/v2/objectives', { title: 'No', time_period_uuid: period.uuid }), 'goals:write');
    expectInsufficientScope(await sa.get('/webhooks'), 'webhooks');

    // rotate: the new secret works, the old one gets no token, and the tokens issued before the rotation end with it
    const rotated = await t.admin.post(`/service_accounts/${a.uuid}/rotate_secret`);
    expect(rotated.status).toBe(200);
    const b = rotated.body.data.record;
    expect(b.client_id).toBe(a.client_id);
    expect(b.client_secret).not.toBe(a.client_secret);
    expectOAuthError(await tokenRequest(credentials(a)), 401, 'invalid_client');
    expectError(await sa.get('/rest/v2/objectives'), 401, 'unauthorized');
    expectError(await new Api(basic.body.access_token).get('/rest/v2/users'), 401, 'unauthorized');
    const fresh = await tokenFor(b); // asked for at once: not taken for one issued before the rotation
    expect((await fresh.get('/rest/v2/objectives')).status).toBe(200);

    // disabled: its tokens are refused at once, and it gets no new one; enabled again, they work again
    const disabled = await t.admin.put(`/service_accounts/${a.uuid}`, { status: 'disabled' });
    expect(disabled.body.data.record.status).toBe('disabled');
    expectError(await fresh.get('/rest/v2/objectives'), 401, 'unauthorized');
    expectOAuthError(await tokenRequest(credentials(b)), 401, 'invalid_client');
    expect((await t.admin.put(`/service_accounts/${a.uuid}`, { status: 'active' })).status).toBe(200);
    expect((await fresh.get('/rest/v2/objectives')).status).toBe(200);

    // deleted: its tokens are refused, it is gone
    const deleted = await t.admin.delete(`/service_accounts/${a.uuid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data.record.uuid).toBe(a.uuid);
    expectError(await fresh.get('/rest/v2/objectives'), 401, 'unauthorized');
    expectOAuthError(await tokenRequest(credentials(b)), 401, 'invalid_client');
    expectError(await t.admin.get(`/service_accounts/${a.uuid}`), 404, 'not_found');
  });

  it('narrows a token to the scopes asked for, and changes to the account`s scopes apply to its next token', async () => {
    const a = await create(t.admin, { name: 'narrow', scopes: ['goals:read', 'goals:write', 'directory:read'] });
    const narrow = await tokenRequest({ ...credentials(a), scope: 'directory:read' });
    expect(narrow.body.scope).toBe('directory:read');
    const api = new Api(narrow.body.access_token);
    expect((await api.get('/rest/v2/users')).status).toBe(200);
    expectInsufficientScope(await api.get('/rest/v2/objectives'), 'goals:read');
    expectOAuthError(await tokenRequest({ ...credentials(a), scope: 'goals:read webhooks' }), 400, 'invalid_scope');
    const updated = await t.admin.put(`/service_accounts/${a.uuid}`, { scopes: ['goals:read'], name: 'narrower' });
    expect(updated.body.data.record).toMatchObject({ name: 'narrower', scopes: ['goals:read'] });
    expectOAuthError(await tokenRequest({ ...credentials(a), scope: 'directory:read' }), 400, 'invalid_scope');
    expect((await tokenRequest(credentials(a))).body.scope).toBe('goals:read');
  });

  it('narrows the tokens already issued when the account`s scopes are narrowed, through every door (contract 19)', async () => {
    const a = await create(t.admin, { name: 'narrowed later', scopes: ['goals:read', 'directory:read', 'directory:write', 'scim'] });
    const api = await tokenFor(a);
    expect((await api.get('/rest/v2/objectives')).status).toBe(200);
    expect((await api.get('/scim/v2/Users?count=1')).status).toBe(200);

    // the token still claims every scope (the gateway's authorizer would let it through): the function refuses it
    expect((await t.admin.put(`/service_accounts/${a.uuid}`, { scopes: ['directory:read'] })).status).toBe(200);
    expectInsufficientScope(await api.get('/rest/v2/objectives'), 'goals:read');
    const member = await t.user({ role: 'member' });
    expectInsufficientScope(await api.put(`/rest/v2/users/${member.uuid}`, { user: { display_name: 'Renamed' } }), 'directory:write');
    expect((await t.admin.get(`/rest/v2/users/${member.uuid}`)).body.data.record.display_name).not.toBe('Renamed');
    const scim = await api.get('/scim/v2/Users?count=1');
    expect([scim.status, scim.body.status, scim.headers.get('www-authenticate')]).toEqual([
      403,
      '403',
      'Bearer error="insufficient_scope", scope="scim"',
    ]);
    expect((await api.get('/rest/v2/users')).status).toBe(200); // what it still holds works
    // the account is read in the caller's one BatchGetItem, beside what the route reads ahead: no round trip more than a user's token
    const [byAccount, byAdmin] = [await api.get(`/rest/v2/users/${member.uuid}`), await t.admin.get(`/rest/v2/users/${member.uuid}`)];
    expect([byAccount.status, byAccount.headers.get('x-db-round-trips')]).toEqual([200, expect.stringMatching(/^\d+$/)]);
    expect(byAccount.headers.get('x-db-round-trips')).toBe(byAdmin.headers.get('x-db-round-trips'));

    // widened again, it acts with what both its claim and the account hold: never beyond the claim
    const wider = ['goals:read', 'goals:write', 'directory:read', 'directory:write', 'scim'];
    expect((await t.admin.put(`/service_accounts/${a.uuid}`, { scopes: wider })).status).toBe(200);
    expect((await api.get('/rest/v2/objectives')).status).toBe(200);
    expect((await api.put(`/rest/v2/users/${member.uuid}`, { user: { display_name: 'Renamed' } })).status).toBe(200);
    expectInsufficientScope(await api.post('/rest/v2/objectives', { title: 'No', time_period_uuid: period.uuid }), 'goals:write');
  });

  it('ends every token issued before a rotation, an operator`s long-lived one too, and none issued after it', async () => {
    let current = await create(t.admin, { name: 'rotated', scopes: ['goals:read', 'scim'] });
    for (let round = 0; round < 5; round++) {
      // issued just before the rotation, often within the same second of the clock as the rotation
      const [viaGrant, viaOperator] = await Promise.all([tokenFor(current), operatorToken(current.uuid)]);
      expect((await viaGrant.get('/rest/v2/objectives')).status).toBe(200);
      current = await rotate(current.uuid);
      expectError(await viaGrant.get('/rest/v2/objectives'), 401, 'unauthorized');
      const idp = await viaOperator.get('/scim/v2/Users?count=1');
      expect([idp.status, idp.body.status]).toEqual([401, '401']); // in SCIM's error shape
      // a token asked for right after the rotation works at once
      const after = await tokenFor(current);
      expect((await after.get('/rest/v2/objectives')).status).toBe(200);
      expect((await after.get('/scim/v2/Users?count=1')).status).toBe(200);
    }
  });

  it('acts as an admin narrowed to its scopes, its writes attributed to the account', async () => {
    const a = await create(t.admin, { name: 'writer', scopes: ['goals:read', 'goals:write'] });
    const api = await tokenFor(a);
    const goal = await api.post('/rest/v2/objectives', { title: 'By a machine', time_period_uuid: period.uuid });
    expect(goal.status).toBe(201);
    expect(goal.body.data.record.creator_uuid).toBe(a.uuid);
    const archived = await api.post(`/rest/v2/objectives/${goal.body.data.record.uuid}/archive`);
    expect(archived.status).toBe(200);
    expect(archived.body.data.record.archived_by_uuid).toBe(a.uuid);
    // an admin's reach: a limited goal of someone else is visible to it
    const limited = await t.admin.post('/rest/v2/objectives', { title: 'Limited', time_period_uuid: period.uuid, visibility: 'limited' });
    expect((await api.get(`/rest/v2/objectives/${limited.body.data.record.uuid}`)).status).toBe(200);
  });

  it("an operator's long-lived token of an account (an identity provider's fixed SCIM token) stops with the account", async () => {
    const a = await create(t.admin, { name: 'Okta provisioning', scopes: ['scim'] });
    const issued = (await runAdmin([
      'issue-token',
      '--tenant',
      t.tenantUuid,
      '--service-account',
      a.uuid,
      '--ttl',
      String(30 * 86400),
    ])) as {
      token: string;
      scope: string;
    };
    expect(issued.scope).toBe('scim');
    const idp = new Api(issued.token);
    const found = await idp.get('/scim/v2/Users?filter=userName%20eq%20%22nobody%40example.test%22');
    expect([found.status, found.body.totalResults]).toEqual([200, 0]);
    expectInsufficientScope(await idp.get('/rest/v2/objectives'), 'goals:read');
    expect((await t.admin.put(`/service_accounts/${a.uuid}`, { status: 'disabled' })).status).toBe(200);
    const refused = await idp.get('/scim/v2/Users');
    expect([refused.status, refused.body.status]).toEqual([401, '401']); // in SCIM's error shape
    // no token for a disabled account, nor for another tenant's account
    await expect(runAdmin(['issue-token', '--tenant', t.tenantUuid, '--service-account', a.uuid])).rejects.toThrow(/disabled/);
    await expect(runAdmin(['issue-token', '--tenant', other.tenantUuid, '--service-account', a.uuid])).rejects.toThrow(
      /No service account/,
    );
  });

  it('keeps a webhook it created sending while it is active with the webhooks scope; disabled, the webhook stops', async () => {
    const a = await create(t.admin, { name: 'hooks', scopes: ['webhooks'] });
    const receiver = await startReceiver();
    try {
      const created = await (await tokenFor(a)).post('/webhooks', { url: receiver.url, events: ['goal.created'] });
      expect(created.status).toBe(201);
      const w = created.body.data.record;
      const sent = (uuid: string) => receiver.events().some((e) => e.event.type === 'goal.created' && e.event.data.record.uuid === uuid);
      // the fan-out finds the tenant's endpoints through their list, an index that may lag the create: listed first
      // (within the lists' 2 s, contract 14)
      await withinListLag(async () => expect((await listAll(t.admin, '/webhooks')).map((x) => x.uuid)).toContain(w.uuid));
      const first = (await t.admin.post('/rest/v2/objectives', { title: 'Seen', time_period_uuid: period.uuid })).body.data.record;
      await eventually(() => (sent(first.uuid) ? true : undefined), EVENTUALLY_MAX_MS, 'the delivery of a service account`s webhook');
      expect((await t.admin.get(`/webhooks/${w.uuid}`)).body.data.record.status).toBe('active');

      expect((await t.admin.put(`/service_accounts/${a.uuid}`, { status: 'disabled' })).status).toBe(200);
      const second = (await t.admin.post('/rest/v2/objectives', { title: 'Unseen', time_period_uuid: period.uuid })).body.data.record;
      await eventually(
        async () => ((await t.admin.get(`/webhooks/${w.uuid}`)).body.data.record.status === 'disabled' ? true : undefined),
        EVENTUALLY_MAX_MS,
        'the webhook disabled with its creator',
      );
      await deliveriesSettled(t.admin, w.uuid);
      expect(sent(second.uuid)).toBe(false);
    } finally {
      await receiver.stop();
    }
  });

  it('refuses each malformed or unauthenticated token request in RFC 6749`s shape, never telling whether a client exists', async () => {
    const a = await create(t.admin, { name: 'refusals', scopes: ['goals:read'] });
    expectOAuthError(await tokenRequest({ ...credentials(a), grant_type: 'password' }), 400, 'unsupported_grant_type');
    expectOAuthError(await tokenRequest({ client_id: a.client_id, client_secret: a.client_secret }), 400, 'invalid_request');
    expectOAuthError(await tokenRequest(`${new URLSearchParams(credentials(a))}&grant_type=client_credentials`), 400, 'invalid_request');
    expectOAuthError(await tokenRequest(credentials(a), { id: a.client_id, secret: a.client_secret }), 400, 'invalid_request');
    const asJson = await new Api(undefined).request('POST', '/oauth/token', credentials(a));
    expectOAuthError(asJson, 400, 'invalid_request');

    // unknown client, wrong secret, a secret of another client, a malformed id, no credentials: one answer
    const wrong = await tokenRequest({ ...credentials(a), client_secret: `${a.client_secret}x` });
    expectOAuthError(wrong, 401, 'invalid_client');
    const unknownId = `sa_${t.tenantUuid.replaceAll('-', '')}${randomUUID().replaceAll('-', '')}`;
    const unknown = await tokenRequest({ ...credentials(a), client_id: unknownId });
    expectOAuthError(unknown, 401, 'invalid_client');
    expect(unknown.body).toEqual(wrong.body);
    expectOAuthError(await tokenRequest({ ...credentials(a), client_id: 'nobody' }), 401, 'invalid_client');
    expectOAuthError(await tokenRequest({ grant_type: 'client_credentials' }), 401, 'invalid_client');
    const badBasic = await new Api(undefined).request('POST', '/oauth/token', 'grant_type=client_credentials', {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic !!!',
    });
    expectOAuthError(badBasic, 401, 'invalid_client');
  });

  it('is managed by admin users only, and never granted the scope that manages accounts', async () => {
    const member = await t.user({ role: 'member' });
    expectInsufficientScope(await member.api.post('/service_accounts', { name: 'x', scopes: ['goals:read'] }), 'service_accounts');
    expectInsufficientScope(await member.api.get('/service_accounts'), 'service_accounts');
    expectError(await t.admin.post('/service_accounts', { name: 'x', scopes: ['service_accounts'] }), 422, 'validation_failed');
    expectError(await t.admin.post('/service_accounts', { name: 'x', scopes: [] }), 422, 'validation_failed');
    expectError(await t.admin.post('/service_accounts', { name: 'x', scopes: ['goals:read'], client_id: 'mine' }), 400);
    // an admin demoted keeps its token's scopes but not its rights
    const admin2 = await t.user({ role: 'admin' });
    expect((await t.admin.put(`/rest/v2/users/${admin2.uuid}`, { user: { role: 'member' } })).status).toBe(200);
    expectError(await admin2.api.get('/service_accounts'), 403, 'forbidden');
  });

  it('keeps each tenant`s accounts and tokens to that tenant', async () => {
    const a = await create(t.admin, { name: 'mine', scopes: ['goals:read', 'directory:read'] });
    expectError(await other.admin.get(`/service_accounts/${a.uuid}`), 404, 'not_found');
    expectError(await other.admin.put(`/service_accounts/${a.uuid}`, { status: 'disabled' }), 404, 'not_found');
    expectError(await other.admin.post(`/service_accounts/${a.uuid}/rotate_secret`), 404, 'not_found');
    expectError(await other.admin.delete(`/service_accounts/${a.uuid}`), 404, 'not_found');
    expect((await listAll(other.admin, '/service_accounts')).map((r) => r.uuid)).not.toContain(a.uuid);
    // the account's uuid under the other tenant's id is no client
    const moved = `sa_${other.tenantUuid.replaceAll('-', '')}${a.uuid.replaceAll('-', '')}`;
    expectOAuthError(await tokenRequest({ ...credentials(a), client_id: moved }), 401, 'invalid_client');
    // its token reads its own tenant only
    const api = await tokenFor(a);
    const theirs = await other.admin.post('/rest/v2/time_periods', { name: 'Theirs', start_date: '2026-01-01', end_date: '2026-03-31' });
    expectError(await api.get(`/rest/v2/time_periods/${theirs.body.data.record.uuid}`), 404, 'not_found');
    expect((await t.admin.get(`/service_accounts/${a.uuid}`)).body.data.record.status).toBe('active');
  });

  it('throttles guessing a client`s secret in a budget of its own per client id (429 with Retry-After), a right secret too while it is spent', async () => {
    // the failed-credential budget (contract 19, shared/http/credential-budget.ts): the stack and this worker read the same environment
    const limit = failedCredentialLimitsFromEnv().client;
    if (!limit) throw new Error('the failed-credential budget per client id is off in this environment');
    const a = await create(t.admin, { name: 'target', scopes: ['goals:read'] });
    const answers: number[] = [];
    for (let i = 0; i < limit.burst + 5 && !answers.includes(429); i++)
      answers.push((await tokenRequest({ ...credentials(a), client_secret: `guess-${i}` })).status);
    expect(answers.slice(0, limit.burst)).toEqual(Array(limit.burst).fill(401));
    expect(answers).toContain(429);
    const throttled = await tokenRequest(credentials(a));
    expect([throttled.status, throttled.body.error]).toEqual([429, 'rate_limited']);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await t.admin.get('/service_accounts')).status).toBe(200); // the tenant's callers are served as before
  });
});
