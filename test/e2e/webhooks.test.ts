import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, listAll, newTenant, type TenantFixture } from '../support/api.ts';
import { startReceiver } from './webhooks.fixture.ts';

describe('webhook endpoints (contract section 12)', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    [t, other] = await Promise.all([newTenant(), newTenant()]);
    receiver = await startReceiver();
  });
  afterAll(() => receiver.stop());

  it('creates with the secret shown once; get, list, update and delete never show it again', async () => {
    const res = await t.admin.post('/webhooks', {
      url: receiver.url,
      events: ['goal.created', 'checkin.created'],
      description: 'CRM sync',
    });
    expect(res.status).toBe(201);
    const rec = res.body.data.record;
    expect(res.body.data.type).toBe('webhook');
    expect(Object.keys(rec).sort()).toEqual(['created_at', 'description', 'events', 'secret', 'status', 'updated_at', 'url', 'uuid']);
    expect(rec).toMatchObject({
      url: receiver.url,
      events: ['goal.created', 'checkin.created'],
      description: 'CRM sync',
      status: 'active',
    });
    expect(rec.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(rec.secret.slice(6), 'base64')).toHaveLength(32);

    const got = await t.admin.get(`/webhooks/${rec.uuid}`);
    expect(got.status).toBe(200);
    expect(got.body.data.record).not.toHaveProperty('secret');
    expect(JSON.stringify(got.body)).not.toContain(rec.secret);
    const { secret: _secret, ...withoutSecret } = rec;
    expect(got.body.data.record).toEqual(withoutSecret);

    const listed = await listAll(t.admin, '/webhooks');
    expect(listed.map((w) => w.uuid)).toContain(rec.uuid);
    expect(JSON.stringify(listed)).not.toContain('whsec_');

    const upd = await t.admin.put(`/webhooks/${rec.uuid}`, { events: ['*'], description: null, status: 'disabled' });
    expect(upd.status).toBe(200);
    expect(upd.body.data.record).toMatchObject({ uuid: rec.uuid, events: ['*'], description: null, status: 'disabled', url: receiver.url });
    expect(upd.body.data.record).not.toHaveProperty('secret');

    const del = await t.admin.delete(`/webhooks/${rec.uuid}`);
    expect(del.status).toBe(200);
    expect(del.body.data.record.uuid).toBe(rec.uuid);
    expectError(await t.admin.get(`/webhooks/${rec.uuid}`), 404, 'not_found');
  });

  it('refuses unsafe or malformed endpoints with 422/400 and writes nothing', async () => {
    const before = (await listAll(t.admin, '/webhooks')).length;
    for (const url of [
      'http://example.com/hook',
      'https://10.0.0.8/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/x',
      'ftp://127.0.0.1/x',
      'not a url',
      'https://user:pw@example.com/',
    ]) {
      const e = expectError(await t.admin.post('/webhooks', { url, events: ['*'] }), 422, 'validation_failed');
      expect(e.details[0]!.field, url).toBe('url');
    }
    expect(
      expectError(await t.admin.post('/webhooks', { url: receiver.url, events: ['goal.exploded'] }), 422, 'validation_failed').details[0]!
        .field,
    ).toBe('events.0');
    expect(
      expectError(await t.admin.post('/webhooks', { url: receiver.url, events: [] }), 422, 'validation_failed').details[0]!.field,
    ).toBe('events');
    expect(
      expectError(await t.admin.post('/webhooks', { url: receiver.url, events: ['*'], secret: 'whsec_mine' }), 400, 'bad_request')
        .details[0]!.field,
    ).toBe('secret');
    expect(
      expectError(await t.admin.post('/webhooks', { url: receiver.url, events: 'goal.created' }), 400, 'bad_request').details[0]!.field,
    ).toBe('events');
    expect(await listAll(t.admin, '/webhooks')).toHaveLength(before);
  });

  it('is for admins only', async () => {
    const member = await t.user({ role: 'member' });
    // an admin demoted to member keeps its token's webhooks scope (until reissued), not the role's rights
    const demoted = await t.user({ role: 'admin' });
    expect((await t.admin.put(`/rest/v2/users/${demoted.uuid}`, { user: { role: 'member' } })).status).toBe(200);
    const w = (await t.admin.post('/webhooks', { url: receiver.url, events: ['*'] })).body.data.record;
    const calls = [
      (api: typeof member.api) => api.post('/webhooks', { url: receiver.url, events: ['*'] }),
      (api: typeof member.api) => api.get('/webhooks'),
      (api: typeof member.api) => api.get(`/webhooks/${w.uuid}`),
      (api: typeof member.api) => api.put(`/webhooks/${w.uuid}`, { status: 'disabled' }),
      (api: typeof member.api) => api.delete(`/webhooks/${w.uuid}`),
      (api: typeof member.api) => api.get(`/webhooks/${w.uuid}/deliveries`),
    ];
    for (const call of calls) {
      // a member's token does not carry the webhooks scope (contract section 17)
      expectError(await call(member.api), 403, 'insufficient_scope');
      expectError(await call(demoted.api), 403, 'forbidden');
    }
    expect((await t.admin.get(`/webhooks/${w.uuid}`)).body.data.record.status).toBe('active');
  });

  it("another tenant's webhook uuid is 404 in every verb", async () => {
    const w = (await t.admin.post('/webhooks', { url: receiver.url, events: ['*'] })).body.data.record;
    expectError(await other.admin.get(`/webhooks/${w.uuid}`), 404, 'not_found');
    expectError(await other.admin.put(`/webhooks/${w.uuid}`, { status: 'disabled' }), 404, 'not_found');
    expectError(await other.admin.delete(`/webhooks/${w.uuid}`), 404, 'not_found');
    expectError(await other.admin.get(`/webhooks/${w.uuid}/deliveries`), 404, 'not_found');
    expectError(await other.admin.post(`/webhooks/${w.uuid}/deliveries/${w.uuid}/redeliver`), 404, 'not_found');
    expect((await listAll(other.admin, '/webhooks')).map((x) => x.uuid)).not.toContain(w.uuid);
    expect((await t.admin.get(`/webhooks/${w.uuid}`)).body.data.record.status).toBe('active');
  });

  it('holds the cap of 50 endpoints under concurrent creates, and a delete frees a place (several rounds)', async () => {
    for (let round = 0; round < 3; round++) {
      const tenant = await newTenant();
      const url = (n: number) => `${receiver.url}?r=${round}&n=${n}`;
      for (let i = 0; i < 45; i++) expect((await tenant.admin.post('/webhooks', { url: url(i), events: ['*'] })).status).toBe(201);
      const racing = await Promise.all(
        Array.from({ length: 12 }, (_, j) => tenant.admin.post('/webhooks', { url: url(100 + j), events: ['*'] })),
      );
      expect(racing.filter((r) => r.status === 201)).toHaveLength(5);
      for (const r of racing.filter((r) => r.status !== 201))
        expect(expectError(r, 422, 'validation_failed').details[0]).toMatchObject({ field: 'url', code: 'too_many' });
      const listed = await listAll(tenant.admin, '/webhooks');
      expect(listed).toHaveLength(50);
      expect((await tenant.admin.delete(`/webhooks/${listed[0]!.uuid}`)).status).toBe(200);
      expect((await tenant.admin.post('/webhooks', { url: url(200), events: ['*'] })).status).toBe(201);
      expectError(await tenant.admin.post('/webhooks', { url: url(201), events: ['*'] }), 422, 'validation_failed');
    }
  });
});
