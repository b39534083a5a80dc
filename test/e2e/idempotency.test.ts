import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { idempotencyRecordKey } from '#shared/db/idempotency-store.ts';
import { keys } from '#shared/db/keys.ts';
import { expectError, listAll, newTenant, type Api } from '../support/api.ts';
import { createPeriod } from './goals.fixture.ts';

const post = (api: Api, path: string, body: unknown, key?: string) =>
  api.request('POST', path, body, key === undefined ? {} : { 'idempotency-key': key });
const labelNames = async (api: Api) => (await listAll(api, '/rest/v2/labels')).map((l) => l.name as string);

describe('Idempotency-Key on POST (contract section 11)', () => {
  it('replays the first answer with Idempotent-Replayed: true and writes nothing new; JSON key order does not matter', async () => {
    const t = await newTenant();
    const key = `create-${randomUUID()}`;
    const first = await post(t.admin, '/rest/v2/labels', { name: 'Replayed', color: '#ff0000' }, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post(t.admin, '/rest/v2/labels', '{"color":"#ff0000","name":"Replayed"}', key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await labelNames(t.admin)).toEqual(['Replayed']);
  });

  it('refuses the same key with a different body: 422 idempotency_key_reused, nothing written', async () => {
    const t = await newTenant();
    const key = randomUUID();
    expect((await post(t.admin, '/rest/v2/labels', { name: 'One' }, key)).status).toBe(201);
    const e = expectError(await post(t.admin, '/rest/v2/labels', { name: 'Two' }, key), 422, 'idempotency_key_reused');
    expect(e.details[0]?.field).toBe('Idempotency-Key');
    expect(await labelNames(t.admin)).toEqual(['One']);
  });

  it('scopes keys to tenant, user and route', async () => {
    const t = await newTenant();
    const other = await newTenant();
    const member = await t.user({ role: 'admin' });
    const key = 'shared-key';
    expect((await post(t.admin, '/rest/v2/labels', { name: 'Scoped' }, key)).status).toBe(201);
    // Another user of the tenant with the same key and body: a new request (here refused as a duplicate name, not replayed).
    const byOtherUser = await post(member.api, '/rest/v2/labels', { name: 'Scoped' }, key);
    expectError(byOtherUser, 422, 'taken');
    expect(byOtherUser.headers.get('idempotent-replayed')).toBeNull();
    // Another tenant: its own namespace.
    const byOtherTenant = await post(other.admin, '/rest/v2/labels', { name: 'Scoped' }, key);
    expect(byOtherTenant.status).toBe(201);
    expect(byOtherTenant.headers.get('idempotent-replayed')).toBeNull();
    // Another route with the same key and body.
    const team = await post(t.admin, '/rest/v2/teams', { name: 'Scoped' }, key);
    expect(team.status).toBe(201);
    expect(team.headers.get('idempotent-replayed')).toBeNull();
  });

  it('keeps a 4xx answer for the key (replayed), and ignores the header on other methods', async () => {
    const t = await newTenant();
    const key = randomUUID();
    const first = expectError(await post(t.admin, '/rest/v2/labels', { name: '   ' }, key), 422);
    const again = await post(t.admin, '/rest/v2/labels', { name: '   ' }, key);
    expect(again.status).toBe(422);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.error.request_id).toBe(first.request_id);
    const label = (await t.admin.post('/rest/v2/labels', { name: 'Put me' })).body.data.record;
    for (const name of ['A', 'B']) {
      const res = await t.admin.request('PUT', `/rest/v2/labels/${label.uuid}`, { name }, { 'idempotency-key': 'put-key' });
      expect(res.status).toBe(200);
      expect(res.body.data.record.name).toBe(name);
    }
  });

  it('validates the header: 1-255 visible ASCII characters, else 400 and nothing written', async () => {
    const t = await newTenant();
    for (const bad of ['', 'x'.repeat(256), 'has space', 'tab\there', 'caf\u00e9']) {
      const res = await t.admin.request('POST', '/rest/v2/labels', { name: `Bad ${bad.length}` }, { 'idempotency-key': bad });
      // fetch refuses to send some values itself; what reaches the service must be 400.
      const e = expectError(res, 400, 'bad_request');
      expect(e.details[0]?.field).toBe('Idempotency-Key');
    }
    expect(await labelNames(t.admin)).toEqual([]);
    const longest = '~'.repeat(255);
    expect((await post(t.admin, '/rest/v2/labels', { name: 'Longest key' }, longest)).status).toBe(201);
    expect((await post(t.admin, '/rest/v2/labels', { name: 'Longest key' }, longest)).headers.get('idempotent-replayed')).toBe('true');
  });

  it('stores the record under the tenant prefix with a 24 h TTL and the first response', async () => {
    const t = await newTenant();
    const key = randomUUID();
    const res = await post(t.admin, '/rest/v2/labels', { name: 'Stored' }, key);
    expect(res.status).toBe(201);
    const PK = idempotencyRecordKey({ tenantId: t.tenantUuid, userId: t.adminUuid, route: 'POST /rest/v2/labels', key });
    expect(PK.startsWith(`T#${t.tenantUuid}#idem#`)).toBe(true);
    const item = (
      await baseDb().send(new GetCommand({ TableName: process.env.TABLE_NAME!, Key: { PK, SK: 'IDEM' }, ConsistentRead: true }))
    ).Item!;
    expect(item.idem_status).toBe('COMPLETED');
    expect(item.expires_at).toBeGreaterThan(Date.now() / 1000 + 24 * 3600 - 120);
    expect(item.expires_at).toBeLessThanOrEqual(Date.now() / 1000 + 24 * 3600 + 1);
    expect(JSON.parse(item.idem_response.body)).toEqual(res.body);
  });

  it('answers 409 idempotency_key_in_use while the first runs, and creates exactly once (many rounds)', async () => {
    const t = await newTenant();
    let inUse = 0;
    let replayed = 0;
    for (let round = 0; round < 12; round++) {
      const key = `round-${round}-${randomUUID()}`;
      const results = await Promise.all(Array.from({ length: 6 }, () => post(t.admin, '/rest/v2/labels', { name: `Round ${round}` }, key)));
      const created = results.filter((r) => r.status === 201);
      for (const r of results) if (r.status !== 201) expectError(r, 409, 'idempotency_key_in_use');
      expect(created.length).toBeGreaterThan(0);
      expect(created.filter((r) => r.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
      expect(new Set(created.map((r) => r.body.data.record.uuid)).size).toBe(1);
      inUse += results.length - created.length;
      replayed += created.length - 1;
      // After the first finished, the key replays.
      const after = await post(t.admin, '/rest/v2/labels', { name: `Round ${round}` }, key);
      expect(after.status).toBe(201);
      expect(after.headers.get('idempotent-replayed')).toBe('true');
    }
    const names = await labelNames(t.admin);
    expect(names.sort()).toEqual(Array.from({ length: 12 }, (_, i) => `Round ${i}`).sort());
    expect(inUse + replayed).toBe(12 * 5);
  });

  it('does not keep the key when the first attempt ends in 5xx: the retry runs again', async () => {
    const t = await newTenant();
    const group = (await t.admin.post('/rest/v2/labels', { name: 'Group', is_group: true })).body.data.record;
    // Break the group's stored item (no record) so a child create fails inside the service (500), then mend it.
    const table = process.env.TABLE_NAME!;
    const itemKey = keys.entity(t.tenantUuid, 'label', group.uuid);
    const original = (await baseDb().send(new GetCommand({ TableName: table, Key: itemKey, ConsistentRead: true }))).Item!;
    const { rec: _rec, ...broken } = original;
    await baseDb().send(new PutCommand({ TableName: table, Item: broken }));
    const key = randomUUID();
    const body = { name: 'Child', parent_uuid: group.uuid };
    expectError(await post(t.admin, '/rest/v2/labels', body, key), 500, 'internal');
    await baseDb().send(new PutCommand({ TableName: table, Item: original }));
    const retry = await post(t.admin, '/rest/v2/labels', body, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    const replay = await post(t.admin, '/rest/v2/labels', body, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(retry.body);
    expect((await labelNames(t.admin)).sort()).toEqual(['Child', 'Group']);
  });

  /**
   * A request that committed and then died before its idempotency record was completed leaves the record
   * IN_PROGRESS; once its lock expires a retry runs again. Simulated here by putting the record back that way.
   */
  async function forgetAnswer(tenantId: string, userId: string, route: string, key: string): Promise<void> {
    const PK = idempotencyRecordKey({ tenantId, userId, route, key });
    await baseDb().send(
      new UpdateCommand({
        TableName: process.env.TABLE_NAME!,
        Key: { PK, SK: 'IDEM' },
        UpdateExpression: 'SET idem_status = :s, idem_in_progress_until = :expired REMOVE idem_response',
        ExpressionAttributeValues: { ':s': 'INPROGRESS', ':expired': Date.now() - 1000 },
      }),
    );
  }

  it('a retry after a crash between commit and recorded answer applies once: same records, nothing doubled (many rounds)', async () => {
    const t = await newTenant();
    const period = await createPeriod(t.admin, 'Q1', '2026-01-01', '2026-03-31');
    const objective = (
      await t.admin.post('/rest/v2/objectives', { title: 'Parent', time_period_uuid: period.uuid, metric: { target_value: 100 } })
    ).body.data.record;
    const cases: Array<{ path: string; body: (n: number) => unknown; list: string }> = [
      { path: '/rest/v2/labels', body: (n) => ({ name: `Crash ${n}` }), list: '/rest/v2/labels' },
      { path: '/rest/v2/teams', body: (n) => ({ name: `Crash team ${n}` }), list: '/rest/v2/teams' },
      {
        path: '/rest/v2/key_results',
        body: (n) => ({
          title: `KR ${n}`,
          time_period_uuid: period.uuid,
          parents: [{ parent_uuid: objective.uuid }],
          metric: { target_value: 10 },
        }),
        list: '/rest/v2/key_results',
      },
      {
        path: '/rest/v2/checkins',
        body: (n) => ({ goal_uuid: objective.uuid, value: n, checkin_date: `2026-02-${String(n + 1).padStart(2, '0')}` }),
        list: `/rest/v2/checkins?q[goal_uuid_eq]=${objective.uuid}`,
      },
    ];
    for (const c of cases) {
      const rounds = 4;
      for (let n = 0; n < rounds; n++) {
        const key = randomUUID();
        const first = await post(t.admin, c.path, c.body(n), key);
        expect(first.status, JSON.stringify(first.body)).toBe(201);
        await forgetAnswer(t.tenantUuid, t.adminUuid, `POST ${c.path}`, key);
        const retry = await post(t.admin, c.path, c.body(n), key);
        expect(retry.status, JSON.stringify(retry.body)).toBe(201);
        expect(retry.headers.get('idempotent-replayed')).toBeNull(); // it ran again, and found its record
        expect(retry.body.data.record.uuid).toBe(first.body.data.record.uuid);
        const replay = await post(t.admin, c.path, c.body(n), key);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.body.data.record.uuid).toBe(first.body.data.record.uuid);
      }
      const stored = await listAll(t.admin, c.list);
      expect(stored.filter((r) => r.title?.startsWith('KR') || r.name?.startsWith('Crash') || r.goal_uuid === objective.uuid)).toHaveLength(
        rounds,
      );
    }
  });

  it('a new webhook answer is stored for replay sealed (never its secret in clear), and a retry after a crash shows the same secret', async () => {
    const t = await newTenant();
    const key = randomUUID();
    const body = { url: 'http://127.0.0.1:9/hook', events: ['goal.created'] };
    const first = await post(t.admin, '/webhooks', body, key);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const secret = first.body.data.record.secret as string;
    expect(secret).toMatch(/^whsec_/);
    const PK = idempotencyRecordKey({ tenantId: t.tenantUuid, userId: t.adminUuid, route: 'POST /webhooks', key });
    const item = (
      await baseDb().send(new GetCommand({ TableName: process.env.TABLE_NAME!, Key: { PK, SK: 'IDEM' }, ConsistentRead: true }))
    ).Item!;
    expect(item.idem_status).toBe('COMPLETED');
    expect(JSON.stringify(item)).not.toContain(secret.slice(6));
    const replay = await post(t.admin, '/webhooks', body, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    await forgetAnswer(t.tenantUuid, t.adminUuid, 'POST /webhooks', key);
    const retry = await post(t.admin, '/webhooks', body, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.body.data.record.uuid).toBe(first.body.data.record.uuid);
    expect(retry.body.data.record.secret).toBe(secret);
    expect(await listAll(t.admin, '/webhooks')).toHaveLength(1);
  });

  it('scopes the request by its path as well as its body: the same key and empty body on another goal is 422, and that goal is not archived', async () => {
    const t = await newTenant();
    const period = await createPeriod(t.admin, 'Q1', '2026-01-01', '2026-03-31');
    const [a, b] = await Promise.all(
      ['A', 'B'].map(
        async (title) => (await t.admin.post('/rest/v2/objectives', { title, time_period_uuid: period.uuid })).body.data.record,
      ),
    );
    const key = randomUUID();
    const first = await post(t.admin, `/rest/v2/objectives/${a.uuid}/archive`, undefined, key);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data.record.uuid).toBe(a.uuid);
    const other = expectError(await post(t.admin, `/rest/v2/objectives/${b.uuid}/archive`, undefined, key), 422, 'idempotency_key_reused');
    expect(other.details[0]?.field).toBe('Idempotency-Key');
    expect((await t.admin.get(`/rest/v2/objectives/${a.uuid}`)).body.data.record.archived_at).not.toBeNull();
    expect((await t.admin.get(`/rest/v2/objectives/${b.uuid}`)).body.data.record.archived_at).toBeNull();
    // the same path again is still the replay
    const again = await post(t.admin, `/rest/v2/objectives/${a.uuid}/archive`, undefined, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('authorizes a replay as the request would be now: an admin demoted to member gets 403, not the webhook secret again', async () => {
    const t = await newTenant();
    const admin = await t.user({ role: 'admin' });
    const key = randomUUID();
    const body = { url: 'http://127.0.0.1:9/hook', events: ['goal.created'] };
    const first = await post(admin.api, '/webhooks', body, key);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const secret = first.body.data.record.secret as string;
    expect(secret).toMatch(/^whsec_/);
    expect((await post(admin.api, '/webhooks', body, key)).headers.get('idempotent-replayed')).toBe('true'); // still an admin: replayed
    expect((await t.admin.put(`/rest/v2/users/${admin.uuid}`, { user: { role: 'member' } })).status).toBe(200);
    const replay = await post(admin.api, '/webhooks', body, key);
    expectError(replay, 403, 'forbidden');
    expect(replay.headers.get('idempotent-replayed')).toBeNull();
    expect(JSON.stringify(replay.body)).not.toContain(secret.slice(6));
    expect(JSON.stringify(replay.body)).not.toContain(first.body.data.record.uuid);
  });

  it("refuses a deactivated user's replay (401)", async () => {
    const t = await newTenant();
    const member = await t.user({ role: 'member' });
    const key = randomUUID();
    const first = await post(member.api, '/rest/v2/labels', { name: 'Mine' }, key);
    expect(first.status).toBe(201);
    expect((await t.admin.put(`/rest/v2/users/${member.uuid}`, { user: { status: 'inactive' } })).status).toBe(200);
    const replay = await post(member.api, '/rest/v2/labels', { name: 'Mine' }, key);
    expectError(replay, 401);
    expect(replay.headers.get('idempotent-replayed')).toBeNull();
    expect(JSON.stringify(replay.body)).not.toContain(first.body.data.record.uuid);
  });

  it("refuses a member's replay of a write on a goal it can no longer change (403)", async () => {
    const t = await newTenant();
    const member = await t.user({ role: 'member' });
    const period = await createPeriod(t.admin, 'Q1', '2026-01-01', '2026-03-31');
    const goal = (await t.admin.post('/rest/v2/objectives', { title: 'Theirs', time_period_uuid: period.uuid, owner_uuids: [member.uuid] }))
      .body.data.record;
    const key = randomUUID();
    const checkin = { goal_uuid: goal.uuid, value: 5, checkin_date: '2026-02-01' };
    const checked = await post(member.api, '/rest/v2/checkins', checkin, key);
    expect(checked.status, JSON.stringify(checked.body)).toBe(201);
    const archived = await post(member.api, `/rest/v2/objectives/${goal.uuid}/archive`, undefined, key);
    expect(archived.status, JSON.stringify(archived.body)).toBe(200);
    expect((await post(member.api, '/rest/v2/checkins', checkin, key)).headers.get('idempotent-replayed')).toBe('true'); // still an owner: replayed
    // no longer an owner: the goal stays visible (public), not editable
    expect((await t.admin.put(`/rest/v2/objectives/${goal.uuid}`, { owner_uuids: [t.adminUuid] })).status).toBe(200);
    for (const [path, body] of [
      [`/rest/v2/objectives/${goal.uuid}/archive`, undefined],
      ['/rest/v2/checkins', checkin],
    ] as const) {
      const replay = await post(member.api, path, body, key);
      expectError(replay, 403, 'forbidden');
      expect(replay.headers.get('idempotent-replayed')).toBeNull();
    }
  });
});
