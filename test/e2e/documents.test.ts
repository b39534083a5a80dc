import { beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { createEntity } from '../support/seed.ts';
import { REFRESH_STALE_AFTER_MS, refreshThreadEntity, type RefreshThreadRecord } from '#shared/domain/documents/entity.ts';
import { Api, expectError, listAll, newTenant, type TenantFixture } from '../support/api.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function createDoc(api: Api, title: string, content?: string | null): Promise<any> {
  const res = await api.post('/documents', content === undefined ? { title } : { title, content });
  if (res.status !== 201) throw new Error(`document create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.record;
}

async function grant(owner: Api, doc: string, user: string, level: string | null) {
  const res = await owner.put(`/documents/${doc}/grants`, { user_uuid: user, level });
  if (res.status !== 200) throw new Error(`grant failed: ${res.status} ${JSON.stringify(res.body)}`);
}

const statusPath = (thread: string) => `/chat/refresh_threads/${thread}/status`;

/** Polls the status endpoint until the run is no longer running (the local stack's worker runs it in-process). */
async function waitForEnd(api: Api, thread: string, timeoutMs = 15_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api.get(statusPath(thread));
    expect(res.status).toBe(200);
    if (res.body.state !== 'running') return res.body;
    if (Date.now() > deadline) throw new Error(`refresh thread ${thread} still running after ${timeoutMs} ms`);
    await sleep(150);
  }
}

/** A run written straight to the table (no message queued): a refresh "in progress", or one whose message was lost. */
async function insertRunningThread(
  tenantId: string,
  documentUuid: string,
  startedAt = new Date().toISOString(),
): Promise<RefreshThreadRecord> {
  const thread: RefreshThreadRecord = {
    uuid: crypto.randomUUID(),
    document_uuid: documentUuid,
    state: 'running',
    skill_status: null,
    summary: null,
    started_at: startedAt,
    completed_at: null,
    requested_by_uuid: documentUuid,
    created_at: startedAt,
    updated_at: startedAt,
  };
  await createEntity({ tenantId, db: baseDb() }, refreshThreadEntity, thread);
  return thread;
}

const uuidsOf = (records: any[]) => records.map((r) => r.uuid);

describe('GET /documents', () => {
  it('lists what the caller can see: owner, grantees (viewers included), admins; strangers see nothing', async () => {
    const t = await newTenant();
    const [owner, grantee, viewer, stranger] = await Promise.all([t.user(), t.user(), t.user({ role: 'viewer' }), t.user()]);
    const d1 = await createDoc(owner.api, 'Roadmap', 'Ship v2.');
    const d2 = await createDoc(owner.api, 'Retro');
    await owner.api.post('/playbooks', { title: 'Not a document' });
    await grant(owner.api, d1.uuid, grantee.uuid, 'view');
    await grant(owner.api, d2.uuid, viewer.uuid, 'edit');

    const res = await owner.api.get('/documents');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      type: 'document',
      checks: { can_create: true },
      filters: {},
      pagy: { page: 1, per_page: 20, next: null, prev: null },
    });
    expect(uuidsOf(res.body.data.records)).toEqual([d1.uuid, d2.uuid]);
    // Summaries: no content or grants (a page of 100 full documents could exceed Lambda's response limit).
    expect(res.body.data.records[0]).toEqual({
      uuid: d1.uuid,
      type: 'document',
      shareable_type: 'documents',
      title: 'Roadmap',
      owner_uuid: owner.uuid,
      access_level: 'manage',
      grants_count: 1,
      created_at: d1.created_at,
      updated_at: expect.any(String),
    });

    const granteeList = await listAll(grantee.api, '/documents');
    expect(uuidsOf(granteeList)).toEqual([d1.uuid]);
    expect(granteeList[0].access_level).toBe('view');
    const viewerList = await viewer.api.get('/documents');
    expect(uuidsOf(viewerList.body.data.records)).toEqual([d2.uuid]);
    expect(viewerList.body.data.records[0].access_level).toBe('edit');
    expect(viewerList.body.data.checks).toEqual({ can_create: false });
    expect(await listAll(stranger.api, '/documents')).toEqual([]);
    const adminList = await listAll(t.admin, '/documents');
    expect(uuidsOf(adminList)).toEqual([d1.uuid, d2.uuid]);
    expect(adminList.map((d) => d.access_level)).toEqual(['manage', 'manage']);

    // A revoked grant takes the document out of the grantee's list.
    await grant(owner.api, d1.uuid, grantee.uuid, null);
    expect(await listAll(grantee.api, '/documents')).toEqual([]);

    // Another tenant's admin sees none of them.
    const other = await newTenant();
    expect(await listAll(other.admin, '/documents')).toEqual([]);
  });

  describe('paging and filters', () => {
    let t: TenantFixture;
    let owner: { uuid: string; api: Api };
    let grantee: { uuid: string; api: Api };
    let docs: any[];
    beforeAll(async () => {
      t = await newTenant();
      [owner, grantee] = await Promise.all([t.user(), t.user()]);
      docs = [];
      for (const i of [0, 1, 2, 3, 4]) docs.push(await createDoc(owner.api, `Doc ${i} ${i % 2 ? 'odd' : 'even'}`));
      for (const i of [0, 2, 4]) await grant(owner.api, docs[i].uuid, grantee.uuid, 'comment');
    });

    it('pages in creation order with the common list parameters', async () => {
      const page = async (api: Api, query: string) => (await api.get(`/documents?${query}`)).body.data;
      const p1 = await page(owner.api, 'per_page=2&count=true');
      expect(uuidsOf(p1.records)).toEqual([docs[0].uuid, docs[1].uuid]);
      expect(p1.pagy).toEqual({ page: 1, per_page: 2, offset: 0, next: 2, prev: null, count: 5, next_cursor: expect.any(String) });
      const p3 = await page(owner.api, 'per_page=2&page=3');
      expect(uuidsOf(p3.records)).toEqual([docs[4].uuid]);
      expect(p3.pagy).toMatchObject({ page: 3, next: null, prev: 2 });
      expect(uuidsOf((await page(owner.api, 'limit=3')).records)).toHaveLength(3);
      expect((await page(owner.api, 'limit_max=2')).pagy.per_page).toBe(2);
      expect((await page(owner.api, 'per_page=500')).pagy.per_page).toBe(100);
      expect(uuidsOf((await page(owner.api, 'offset=3')).records)).toEqual([docs[3].uuid, docs[4].uuid]);
      // Invisible documents are skipped, not counted: the grantee's pages hold only its documents.
      const g1 = await page(grantee.api, 'per_page=2&count=true');
      expect(uuidsOf(g1.records)).toEqual([docs[0].uuid, docs[2].uuid]);
      expect(g1.pagy).toMatchObject({ next: 2, count: 3 });
      expect(uuidsOf((await page(grantee.api, 'per_page=2&page=2')).records)).toEqual([docs[4].uuid]);
      expectError(await owner.api.get('/documents?per_page=abc'), 400, 'bad_request');
      expectError(await owner.api.get('/documents?sort=title'), 400, 'bad_request');
    });

    it('filters on uuid, title, owner_uuid and created_at', async () => {
      const list = (api: Api, q: string) => listAll(api, `/documents?${q}`);
      expect(uuidsOf(await list(owner.api, 'q[title_cont]=ODD'))).toEqual([docs[1].uuid, docs[3].uuid]);
      expect(uuidsOf(await list(grantee.api, 'q[title_cont]=odd'))).toEqual([]);
      expect(uuidsOf(await list(owner.api, `q[uuid_eq]=${docs[2].uuid}`))).toEqual([docs[2].uuid]);
      expect(uuidsOf(await list(grantee.api, `q[uuid_in]=${docs[1].uuid},${docs[2].uuid}`))).toEqual([docs[2].uuid]);
      expect(uuidsOf(await list(t.admin, `q[owner_uuid_eq]=${owner.uuid}`))).toEqual(uuidsOf(docs));
      expect(await list(t.admin, `q[owner_uuid_eq]=${grantee.uuid}`)).toEqual([]);
      expect(uuidsOf(await list(owner.api, `q[created_at_gteq]=${encodeURIComponent(docs[3].created_at)}`))).toEqual([
        docs[3].uuid,
        docs[4].uuid,
      ]);
      const echoed = await owner.api.get('/documents?q[title_start]=Doc%201');
      expect(echoed.body.data.filters).toEqual({ title_start: 'Doc 1' });
      const playbook = (await owner.api.post('/playbooks', { title: 'P' })).body.data.record;
      expect(await list(owner.api, `q[uuid_eq]=${playbook.uuid}`)).toEqual([]);
      expectError(await owner.api.get('/documents?q[content_cont]=x'), 400, 'bad_request');
    });
  });
});

describe('document refresh', () => {
  let t: TenantFixture;
  let other: TenantFixture;
  let owner: { uuid: string; api: Api };
  let stranger: { uuid: string; api: Api };
  beforeAll(async () => {
    [t, other] = await Promise.all([newTenant(), newTenant()]);
    [owner, stranger] = await Promise.all([t.user(), t.user()]);
  });

  it('needs edit on the document: owner, admins, edit or manage grants; not view, comment, viewers or strangers', async () => {
    const [viewG, commentG, editG, manageG, viewerRole] = await Promise.all([
      t.user(),
      t.user(),
      t.user(),
      t.user(),
      t.user({ role: 'viewer' }),
    ]);
    const allowed: Array<[string, Api]> = [
      ['owner', owner.api],
      ['admin', t.admin],
      ['edit grant', editG.api],
      ['manage grant', manageG.api],
    ];
    const refused: Array<[string, Api]> = [
      ['view grant', viewG.api],
      ['comment grant', commentG.api],
      ['viewer role with edit grant', viewerRole.api],
      ['stranger', stranger.api],
    ];
    for (const [who, api] of allowed) {
      const doc = await createDoc(owner.api, `Doc for ${who}`, 'Text.');
      for (const [user, level] of [
        [editG, 'edit'],
        [manageG, 'manage'],
      ] as const)
        await grant(owner.api, doc.uuid, user.uuid, level);
      const res = await api.post(`/documents/${doc.uuid}/refresh`);
      expect(res.status, who).toBe(202);
      expect(res.body).toEqual({ thread_uuid: expect.any(String), state: 'running', already_running: false });
      await waitForEnd(api, res.body.thread_uuid);
    }
    const doc = await createDoc(owner.api, 'Guarded', 'Text.');
    for (const [user, level] of [
      [viewG, 'view'],
      [commentG, 'comment'],
      [viewerRole, 'edit'],
    ] as const)
      await grant(owner.api, doc.uuid, user.uuid, level);
    for (const [who, api] of refused)
      expect(expectError(await api.post(`/documents/${doc.uuid}/refresh`), 403, 'forbidden').message, who).toMatch(/edit access/);
  });

  it("answers 404 for another tenant's document (either uuid form), an unknown or malformed uuid, and another shareable type", async () => {
    const doc = await createDoc(owner.api, 'Mine', 'Text.');
    expectError(await other.admin.post(`/documents/${doc.uuid}/refresh`), 404, 'not_found');
    expectError(await other.admin.post(`/documents/${t.tenantUuid}_${doc.uuid}/refresh`), 404, 'not_found');
    expectError(await owner.api.post(`/documents/${other.tenantUuid}_${doc.uuid}/refresh`), 404, 'not_found');
    expectError(await owner.api.post(`/documents/${crypto.randomUUID()}/refresh`), 404, 'not_found');
    expectError(await owner.api.post('/documents/not-a-uuid/refresh'), 404, 'not_found');
    const playbook = (await owner.api.post('/playbooks', { title: 'P' })).body.data.record;
    expectError(await owner.api.post(`/documents/${playbook.uuid}/refresh`), 404, 'not_found');
    expect((await owner.api.post(`/playbooks/${playbook.uuid}/refresh`)).status).toBe(404); // no such route
    const unknown = expectError(await owner.api.post(`/documents/${doc.uuid}/refresh`, { force: true }), 400, 'bad_request');
    expect(unknown.details.map((d) => d.field)).toEqual(['force']);
  });

  it('runs the refresh in the worker; polling ends completed with a one-line summary and completed_at; content refreshed', async () => {
    const doc = await createDoc(owner.api, 'Plan', 'Ship v2 in Q1.\nThen scale.');
    const start = await owner.api.post(`/documents/${t.tenantUuid}_${doc.uuid}/refresh`);
    expect(start.status).toBe(202);
    const ended = await waitForEnd(owner.api, start.body.thread_uuid);
    expect(ended).toEqual({
      thread_uuid: start.body.thread_uuid,
      state: 'completed',
      skill_status: 'completed',
      summary: expect.any(String),
      started_at: expect.any(String),
      completed_at: expect.any(String),
    });
    expect(ended.summary).not.toMatch(/\n/);
    expect(Date.parse(ended.completed_at)).toBeGreaterThanOrEqual(Date.parse(ended.started_at));
    const after = (await owner.api.get(`/documents/${doc.uuid}`)).body.data.record;
    expect(after.content).toMatch(/^Ship v2 in Q1\.\nThen scale\.\n\n---\nLast refreshed: \S+\nSummary: Ship v2 in Q1\.$/);
    expect(after.updated_at > doc.updated_at).toBe(true);

    // A later refresh is a new run and replaces the footer rather than stacking a second one.
    const again = await owner.api.post(`/documents/${doc.uuid}/refresh`);
    expect(again.body.thread_uuid).not.toBe(start.body.thread_uuid);
    expect((await waitForEnd(owner.api, again.body.thread_uuid)).state).toBe('completed');
    const content = (await owner.api.get(`/documents/${doc.uuid}`)).body.data.record.content as string;
    expect(content.match(/Last refreshed:/g)).toHaveLength(1);
  });

  it('an empty document completes with completed_no_changes and stays as it was', async () => {
    const doc = await createDoc(owner.api, 'Empty');
    const start = await owner.api.post(`/documents/${doc.uuid}/refresh`);
    expect(await waitForEnd(owner.api, start.body.thread_uuid)).toMatchObject({
      state: 'completed',
      skill_status: 'completed_no_changes',
      summary: '"Empty" has no content to refresh.',
    });
    expect((await owner.api.get(`/documents/${doc.uuid}`)).body.data.record).toEqual(doc);
  });

  it('while a refresh of the document runs, a second start joins it (same thread, already_running) instead of starting another', async () => {
    const doc = await createDoc(owner.api, 'Busy', 'Text.');
    const running = await insertRunningThread(t.tenantUuid, doc.uuid);
    const res = await owner.api.post(`/documents/${doc.uuid}/refresh`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ thread_uuid: running.uuid, state: 'running', already_running: true });
    expect((await owner.api.get(statusPath(running.uuid))).body).toEqual({
      thread_uuid: running.uuid,
      state: 'running',
      skill_status: null,
      summary: null,
      started_at: running.started_at,
      completed_at: null,
    });
    // Concurrent starts on a free document: one run at a time. A start that overlaps a running run joins it; one
    // that comes after the run ended (the in-process worker can finish a run before a slow start reads) begins the
    // next, so the rule checked is the one promised: no two runs of the document ever run at once.
    const free = await createDoc(owner.api, 'Free', 'Text.');
    const starts = await Promise.all([1, 2, 3].map(() => owner.api.post(`/documents/${free.uuid}/refresh`)));
    expect(starts.map((s) => s.status)).toEqual([202, 202, 202]);
    const fresh = starts.filter((s) => !s.body.already_running).map((s) => s.body.thread_uuid as string);
    expect(fresh.length).toBeGreaterThanOrEqual(1);
    for (const s of starts) expect(fresh).toContain(s.body.thread_uuid);
    const runs = await Promise.all(fresh.map((uuid) => waitForEnd(owner.api, uuid)));
    for (const r of runs) expect(r.state).toBe('completed');
    runs.sort((x, y) => x.started_at.localeCompare(y.started_at));
    for (let i = 1; i < runs.length; i++) expect(runs[i - 1]!.completed_at! <= runs[i]!.started_at).toBe(true);
    const run = runs.at(-1)!.thread_uuid as string;
    const after = await owner.api.post(`/documents/${free.uuid}/refresh`);
    expect(after.body).toMatchObject({ state: 'running', already_running: false });
    expect(after.body.thread_uuid).not.toBe(run);
    expect((await waitForEnd(owner.api, after.body.thread_uuid)).state).toBe('completed');
  });

  it('a run whose message was lost ends failed when polled or when a new refresh starts, so nobody waits forever', async () => {
    const longAgo = new Date(Date.now() - REFRESH_STALE_AFTER_MS - 60_000).toISOString();
    const doc = await createDoc(owner.api, 'Lost', 'Text.');
    const polled = await insertRunningThread(t.tenantUuid, doc.uuid, longAgo);
    const status = (await owner.api.get(statusPath(polled.uuid))).body;
    expect(status).toMatchObject({ state: 'failed', skill_status: null, summary: expect.stringMatching(/did not finish/) });
    expect(status.completed_at).not.toBeNull();

    const doc2 = await createDoc(owner.api, 'Lost too', 'Text.');
    const stale = await insertRunningThread(t.tenantUuid, doc2.uuid, longAgo);
    const res = await owner.api.post(`/documents/${doc2.uuid}/refresh`);
    expect(res.body.already_running).toBe(false);
    expect(res.body.thread_uuid).not.toBe(stale.uuid);
    expect((await owner.api.get(statusPath(stale.uuid))).body.state).toBe('failed');
    expect((await waitForEnd(owner.api, res.body.thread_uuid)).state).toBe('completed');
  });

  it('status: any user of the tenant may poll with the thread uuid; another tenant, unknown or malformed uuids are 404', async () => {
    const doc = await createDoc(owner.api, 'Polled', 'Text.');
    const thread = (await owner.api.post(`/documents/${doc.uuid}/refresh`)).body.thread_uuid as string;
    const mine = await waitForEnd(owner.api, thread);
    const viewer = await t.user({ role: 'viewer' });
    for (const api of [stranger.api, viewer.api, t.admin]) {
      const res = await api.get(statusPath(thread));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(mine);
    }
    expectError(await other.admin.get(statusPath(thread)), 404, 'not_found');
    expectError(await owner.api.get(statusPath(crypto.randomUUID())), 404, 'not_found');
    expectError(await owner.api.get(statusPath('not-a-uuid')), 404, 'not_found');
    expect((await new Api(undefined).get(statusPath(thread))).status).toBe(401);
  });
});
