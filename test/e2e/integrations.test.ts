import { beforeAll, describe, expect, it } from 'vitest';
import { Api, expectError, listAll, newTenant, type TenantFixture } from '../support/api.ts';

const REQUESTS = '/connector_requests';

describe('connector requests', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  let member: { uuid: string; api: Api };
  let viewer: { uuid: string; api: Api };
  beforeAll(async () => {
    [t, other] = await Promise.all([newTenant(), newTenant()]);
    [member, viewer] = await Promise.all([t.user(), t.user({ role: 'viewer' })]);
  });

  it('records a request once per name ignoring case and whitespace; a repeat by the same requester changes nothing', async () => {
    const first = await member.api.post(REQUESTS, { connection_type: '  Sales \t  Force ', request_source: 'catalog' });
    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({ type: 'connector_request', access_source: 'creator', checks: { can_list: false } });
    const rec = first.body.data.record;
    expect(rec).toEqual({
      uuid: expect.any(String),
      connection_type: 'Sales Force',
      normalized_key: 'sales force',
      connector_display_name: 'Sales Force',
      request_source: 'catalog',
      requested_by_uuids: [member.uuid],
      request_count: 1,
      created_at: expect.any(String),
      updated_at: rec.created_at,
    });

    const repeat = await member.api.post(REQUESTS, {
      connection_type: 'SALES FORCE',
      connector_display_name: 'Other name',
      request_source: 'by_name',
    });
    expect(repeat.status).toBe(200);
    expect(repeat.body.data.record).toEqual(rec);

    // a viewer is a tenant member too (contract section 5: viewers write connector requests)
    const byViewer = await viewer.api.post(REQUESTS, { connection_type: 'sales\nforce' });
    expect(byViewer.status).toBe(200);
    expect(byViewer.body.data.record).toMatchObject({
      uuid: rec.uuid,
      connection_type: 'Sales Force',
      request_source: 'catalog',
      requested_by_uuids: [member.uuid, viewer.uuid],
      request_count: 2,
      created_at: rec.created_at,
    });
    expect(byViewer.body.data.record.updated_at >= rec.updated_at).toBe(true);

    const listed = await listAll(t.admin, `${REQUESTS}?q[normalized_key_eq]=${encodeURIComponent('sales force')}`);
    expect(listed).toEqual([byViewer.body.data.record]);
  });

  it('defaults the display name to connection_type when absent or blank, and keeps a given one', async () => {
    const blank = await member.api.post(REQUESTS, { connection_type: 'Zendesk', connector_display_name: '   ', request_source: 'by_name' });
    expect(blank.status).toBe(201);
    expect(blank.body.data.record.connector_display_name).toBe('Zendesk');
    const none = await member.api.post(REQUESTS, { connection_type: 'jira_cloud', connector_display_name: null });
    expect(none.body.data.record).toMatchObject({ connector_display_name: 'jira_cloud', request_source: null });
    const named = await member.api.post(REQUESTS, { connection_type: 'gh', connector_display_name: '  GitHub   Enterprise ' });
    expect(named.body.data.record.connector_display_name).toBe('GitHub Enterprise');
  });

  it('keeps one record when identical requests race, counting each distinct requester once', async () => {
    const users = [member, viewer, ...(await Promise.all([t.user(), t.user()]))];
    const variants = ['Snowflake', 'snowflake', ' SNOWFLAKE ', 'SnowFlake\t'];
    const results = await Promise.all(users.flatMap((u) => variants.map((v) => u.api.post(REQUESTS, { connection_type: v }))));
    for (const r of results) expect([200, 201], JSON.stringify(r.body)).toContain(r.status);
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    const listed = await listAll(t.admin, `${REQUESTS}?q[normalized_key_eq]=snowflake`);
    expect(listed).toHaveLength(1);
    expect(listed[0].request_count).toBe(users.length);
    expect([...listed[0].requested_by_uuids].sort()).toEqual(users.map((u) => u.uuid).sort());
    expect(new Set(results.map((r) => r.body.data.record.uuid)).size).toBe(1);
  });

  it('keeps each tenant to its own list', async () => {
    const mine = await member.api.post(REQUESTS, { connection_type: 'Workday' });
    const theirs = await other.admin.post(REQUESTS, { connection_type: 'workday' });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.body.data.record.uuid).not.toBe(mine.body.data.record.uuid);
    expect(theirs.body.data.record.requested_by_uuids).toEqual([other.adminUuid]);
    const otherList = await listAll(other.admin, REQUESTS);
    expect(otherList.map((r) => r.normalized_key)).toEqual(['workday']);
    expect(await listAll(other.admin, `${REQUESTS}?q[uuid_eq]=${mine.body.data.record.uuid}`)).toEqual([]);
  });

  it('validates the body: unknown fields 400 naming them, wrong types 400, rule breaks 422', async () => {
    const unknown = expectError(
      await member.api.post(REQUESTS, { connection_type: 'X', tenant_uuid: other.tenantUuid, workspace: 'w' }),
      400,
      'bad_request',
    );
    expect(unknown.details.map((d) => d.field).sort()).toEqual(['tenant_uuid', 'workspace']);
    expectError(await member.api.post(REQUESTS, {}), 400, 'bad_request');
    expectError(await member.api.post(REQUESTS, { connection_type: 42 }), 400, 'bad_request');
    expectError(await member.api.post(REQUESTS, { connection_type: 'X', request_source: 7 }), 400, 'bad_request');
    expectError(
      await member.api.request('POST', REQUESTS, '{"connection_type":', { 'content-type': 'application/json' }),
      400,
      'bad_request',
    );
    const source = expectError(
      await member.api.post(REQUESTS, { connection_type: 'X', request_source: 'email' }),
      422,
      'validation_failed',
    );
    expect(source.details[0]!.field).toBe('request_source');
    expectError(await member.api.post(REQUESTS, { connection_type: '   ' }), 422, 'validation_failed');
    expectError(await member.api.post(REQUESTS, { connection_type: 'x'.repeat(201) }), 422, 'validation_failed');
    // nothing was recorded by the refused requests
    expect(await listAll(t.admin, `${REQUESTS}?q[normalized_key_eq]=x`)).toEqual([]);
  });

  it('needs a token (401) and lets only admins list the requests (403)', async () => {
    expect((await new Api(undefined).post(REQUESTS, { connection_type: 'X' })).status).toBe(401);
    expect((await new Api(undefined).get(REQUESTS)).status).toBe(401);
    expectError(await member.api.get(REQUESTS), 403, 'forbidden');
    expectError(await viewer.api.get(REQUESTS), 403, 'forbidden');
    const list = await t.admin.get(`${REQUESTS}?q[request_source_eq]=catalog&count=true`);
    expect(list.status).toBe(200);
    expect(list.body.data).toMatchObject({
      type: 'connector_request',
      checks: { can_create: true },
      filters: { request_source_eq: 'catalog' },
      pagy: { page: 1, count: 1 },
    });
    expect(list.body.data.records.map((r: any) => r.normalized_key)).toEqual(['sales force']);
    expectError(await t.admin.get(`${REQUESTS}?q[tenant_uuid_eq]=x`), 400, 'bad_request');
  });
});
