import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { config } from '#shared/config.ts';
import { baseDb } from '#shared/db/client.ts';
import { accessRequestKey } from '#shared/domain/sharing/entity.ts';
import type { ShareableType } from '#shared/domain/sharing/types.ts';
import { type Api, expectError, listAll, newTenant, type TenantFixture } from '../support/api.ts';
import { EVENTUALLY_MAX_MS, eventually } from '../support/eventually.ts';
import { withinListLag } from '../support/list-lag.ts';
import { afterStreamPasses } from '../support/stream-marker.ts';
import { type OutboxEmail, outboxEmails } from '../support/outbox.ts';

// ---------- helpers: the outbox the local stack's worker writes, the resend clock, a shared document ----------

/** Every e-mail the local stack's workers wrote addressed to `to`. */
const emailsTo = (to: string): OutboxEmail[] => outboxEmails().filter((e) => e.to.includes(to));
/** Every e-mail about the shareable titled `title` (a test's titles are unique: the subject names the title). */
const emailsAbout = (title: string): OutboxEmail[] => outboxEmails().filter((e) => e.subject.includes(`"${title}"`));

/** Polls the outbox (the stream and the worker run asynchronously; with the whole suite writing, the stream lags) until `to` has `count` e-mails, or fails after the timeout. */
async function waitForEmails(to: string, count: number, timeoutMs = EVENTUALLY_MAX_MS): Promise<OutboxEmail[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = emailsTo(to);
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`expected ${count} e-mails to ${to}, found ${found.length}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Moves a request's last e-mail an hour (and a second) into the past, as if the resend window had elapsed:
 * the local stack's clock cannot be advanced from a test worker, and the window is the one thing under test.
 */
async function backdateLastEmail(
  tenantId: string,
  type: ShareableType,
  resourceUuid: string,
  requesterUuid: string,
  byMs = 3_601_000,
): Promise<void> {
  await baseDb().send(
    new UpdateCommand({
      TableName: config.tableName,
      Key: accessRequestKey(tenantId, type, resourceUuid, requesterUuid),
      UpdateExpression: 'SET last_email_sent_at = :t',
      ExpressionAttributeValues: { ':t': new Date(Date.now() - byMs).toISOString() },
    }),
  );
}

interface SharedDoc {
  uuid: string;
  title: string;
  owner: { uuid: string; api: Api; email: string };
  manager: { uuid: string; api: Api; email: string };
}

/** A document owned by a fresh member, with a second fresh member granted `manage`. */
async function sharedDoc(t: TenantFixture, path = 'documents'): Promise<SharedDoc> {
  const owner = await t.user();
  const manager = await t.user();
  const title = `Doc ${crypto.randomUUID().slice(0, 8)}`;
  const created = await owner.api.post(`/${path}`, { title, content: 'body' });
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body)}`);
  const uuid = created.body.data.record.uuid as string;
  const granted = await owner.api.put(`/${path}/${uuid}/grants`, { user_uuid: manager.uuid, level: 'manage' });
  if (granted.status !== 200) throw new Error(`grant failed: ${granted.status} ${JSON.stringify(granted.body)}`);
  return {
    uuid,
    title,
    owner: { uuid: owner.uuid, api: owner.api, email: owner.record.email },
    manager: { uuid: manager.uuid, api: manager.api, email: manager.record.email },
  };
}

/**
 * Resolves once every e-mail the writes before the call could have caused has gone out: the stream has applied
 * them (so whatever they queued is queued), then a marker request's e-mail, queued after all of it on the same
 * queue (worked in order), has arrived. A negative check of the outbox waits for this.
 */
async function afterEmailsPass(t: TenantFixture): Promise<void> {
  await afterStreamPasses();
  const doc = await sharedDoc(t);
  const requester = await t.user();
  const res = await requester.api.post(`/documents/${doc.uuid}/access_requests`, { requested_level: 'view' });
  expect(res.body.data.outcome).toBe('created');
  await waitForEmails(doc.owner.email, 1);
}

const notificationsOf = (api: Api) => listAll(api, '/notifications');
const mine = async (api: Api, path: string) => {
  const res = await api.get(`${path}/access_requests/mine`);
  expect(res.status).toBe(200);
  expect(res.body.data.type).toBe('access_request');
  return res.body.data.record;
};

describe('shareable resources (extension)', () => {
  let t: TenantFixture;
  beforeAll(async () => {
    t = await newTenant();
  });

  it('creates each shareable type with the caller as owner and reads it by both uuid forms', async () => {
    const owner = await t.user();
    for (const [path, type] of [
      ['okrs-dashboards', 'okrs_dashboard'],
      ['documents', 'document'],
      ['explorer-views', 'explorer_view'],
      ['playbooks', 'playbook'],
    ] as const) {
      const res = await owner.api.post(`/${path}`, { title: `A ${type}` });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        type,
        access_source: 'owner',
        checks: { can_comment: true, can_edit: true, can_manage_grants: true, can_request_access: false },
      });
      const rec = res.body.data.record;
      expect(rec).toMatchObject({ type, shareable_type: path, title: `A ${type}`, content: null, owner_uuid: owner.uuid, grants: [] });
      expect(rec.created_at).toBe(rec.updated_at);
      const bare = await owner.api.get(`/${path}/${rec.uuid}`);
      expect(bare.status).toBe(200);
      expect(bare.body.data.record).toEqual(rec);
      const prefixed = await owner.api.get(`/${path}/${t.tenantUuid}_${rec.uuid}`);
      expect(prefixed.status).toBe(200);
      expect(prefixed.body.data.record).toEqual(rec);
    }
  });

  it('answers 404 for another shareable type, an unknown type and a malformed uuid', async () => {
    const doc = await sharedDoc(t);
    expectError(await doc.owner.api.get(`/playbooks/${doc.uuid}`), 404, 'not_found');
    expectError(await doc.owner.api.get('/documents/not-a-uuid'), 404, 'not_found');
    expect((await doc.owner.api.post('/widgets', { title: 'x' })).status).toBe(404);
    expect((await doc.owner.api.get(`/widgets/${doc.uuid}`)).status).toBe(404);
    expect((await doc.owner.api.post(`/widgets/${doc.uuid}/access_requests`, { requested_level: 'view' })).status).toBe(404);
  });

  it('lets the owner, admins and grantees read; others get 403', async () => {
    const doc = await sharedDoc(t);
    const stranger = await t.user();
    expectError(await stranger.api.get(`/documents/${doc.uuid}`), 403, 'forbidden');
    const asAdmin = await t.admin.get(`/documents/${doc.uuid}`);
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.body.data.access_source).toBe('admin');
    await doc.owner.api.put(`/documents/${doc.uuid}/grants`, { user_uuid: stranger.uuid, level: 'comment' });
    const asGrantee = await stranger.api.get(`/documents/${doc.uuid}`);
    expect(asGrantee.status).toBe(200);
    expect(asGrantee.body.data).toMatchObject({
      access_source: 'visible_entity',
      checks: { can_comment: true, can_edit: false, can_manage_grants: false, can_request_access: true },
    });
    expect(asGrantee.body.data.record.grants.map((g: any) => [g.user_uuid, g.level])).toEqual([
      [doc.manager.uuid, 'manage'],
      [stranger.uuid, 'comment'],
    ]);
  });

  it('lets only the owner, admins and manage grantees change grants; validates the grantee and level', async () => {
    const doc = await sharedDoc(t);
    const editor = await t.user();
    const viewerRole = await t.user({ role: 'viewer' });
    const other = await newTenant();
    const base = `/documents/${doc.uuid}/grants`;
    expect((await doc.owner.api.put(base, { user_uuid: editor.uuid, level: 'edit' })).status).toBe(200);
    expectError(await editor.api.put(base, { user_uuid: editor.uuid, level: 'manage' }), 403, 'forbidden');
    expect((await doc.manager.api.put(base, { user_uuid: viewerRole.uuid, level: 'manage' })).status).toBe(200);
    // Viewers write only access requests, whatever their grant.
    expectError(await viewerRole.api.put(base, { user_uuid: editor.uuid, level: 'view' }), 403, 'forbidden');
    expect((await t.admin.put(base, { user_uuid: viewerRole.uuid, level: null })).status).toBe(200);

    expectError(await doc.owner.api.put(base, { user_uuid: other.adminUuid, level: 'view' }), 422, 'validation_failed');
    expectError(await doc.owner.api.put(base, { user_uuid: crypto.randomUUID(), level: 'view' }), 422, 'validation_failed');
    expectError(await doc.owner.api.put(base, { user_uuid: doc.owner.uuid, level: 'view' }), 422, 'validation_failed');
    expectError(await doc.owner.api.put(base, { user_uuid: editor.uuid, level: 'owner' }), 422, 'validation_failed');
    expectError(await doc.owner.api.put(base, { user_uuid: editor.uuid, level: 2 }), 400, 'bad_request');
    const unknown = expectError(
      await doc.owner.api.put(base, { user_uuid: editor.uuid, level: 'view', tenant_uuid: t.tenantUuid }),
      400,
      'bad_request',
    );
    expect(unknown.details.map((d) => d.field)).toContain('tenant_uuid');
    expectError(
      await doc.owner.api.put(`/documents/${crypto.randomUUID()}/grants`, { user_uuid: editor.uuid, level: 'view' }),
      404,
      'not_found',
    );

    const after = await doc.owner.api.get(`/documents/${doc.uuid}`);
    expect(after.body.data.record.grants.map((g: any) => [g.user_uuid, g.level])).toEqual([
      [doc.manager.uuid, 'manage'],
      [editor.uuid, 'edit'],
    ]);
  });

  it('lets a manage grantee revoke its own grant, answering with an allowed access_source and only a request left to make', async () => {
    const doc = await sharedDoc(t);
    const res = await doc.manager.api.put(`/documents/${doc.uuid}/grants`, { user_uuid: doc.manager.uuid, level: null });
    expect(res.status).toBe(200);
    expect(res.body.data.access_source).toBe('visible_entity');
    expect(res.body.data.checks).toEqual({ can_comment: false, can_edit: false, can_manage_grants: false, can_request_access: true });
    expectError(await doc.manager.api.get(`/documents/${doc.uuid}`), 403, 'forbidden');
  });

  it('changes a grant with one read of the resource, and takes the grantee uuid in either case', async () => {
    const doc = await sharedDoc(t);
    const grantee = await t.user();
    const res = await doc.owner.api.put(`/documents/${doc.uuid}/grants`, { user_uuid: grantee.uuid.toUpperCase(), level: 'comment' });
    expect(res.status).toBe(200);
    expect(res.body.data.record.grants.map((g: any) => [g.user_uuid, g.level])).toEqual([
      [doc.manager.uuid, 'manage'],
      [grantee.uuid, 'comment'],
    ]);
    // The caller, the resource (consistent, the write's condition), the grantee, the grantee's request, the transaction.
    expect(res.headers.get('x-db-round-trips')).toBe('5');
    expect((await grantee.api.get(`/documents/${doc.uuid}`)).body.data.access_source).toBe('visible_entity');
    // The type and permission checks moved onto that one read: another type's path is still 404, a non-manager still 403.
    expectError(await doc.owner.api.put(`/playbooks/${doc.uuid}/grants`, { user_uuid: grantee.uuid, level: 'view' }), 404, 'not_found');
    expectError(
      await grantee.api.put(`/documents/${doc.uuid}/grants`, { user_uuid: crypto.randomUUID(), level: 'view' }),
      403,
      'forbidden',
    );
  });

  it('refuses creation by viewers and bad bodies', async () => {
    const viewer = await t.user({ role: 'viewer' });
    expectError(await viewer.api.post('/documents', { title: 'x' }), 403, 'forbidden');
    expectError(await t.admin.post('/documents', { title: 'x', owner_uuid: t.adminUuid }), 400, 'bad_request');
    expectError(await t.admin.post('/documents', { title: '  ' }), 422, 'validation_failed');
    expectError(await t.admin.request('POST', '/documents', '{nope', { 'content-type': 'application/json' }), 400, 'bad_request');
  });
});

describe('access requests', () => {
  let t: TenantFixture;
  beforeAll(async () => {
    t = await newTenant();
  });

  it('creates a pending request, notifying only the owner and managers, in-app and by e-mail', async () => {
    const doc = await sharedDoc(t);
    const editor = await t.user();
    await doc.owner.api.put(`/documents/${doc.uuid}/grants`, { user_uuid: editor.uuid, level: 'edit' });
    const requester = await t.user({ display_name: 'Rita Requester' });
    const path = `/documents/${t.tenantUuid}_${doc.uuid}`;
    expect(await mine(requester.api, path)).toBeNull();

    const res = await requester.api.post(`${path}/access_requests`, { requested_level: 'comment', message: 'Please let me comment' });
    expect(res.status).toBe(200);
    expect(res.body.data.type).toBe('access_request');
    expect(res.body.data.outcome).toBe('created');
    const rec = res.body.data.record;
    expect(rec).toMatchObject({
      shareable_type: 'documents',
      shareable_uuid: doc.uuid,
      requester_uuid: requester.uuid,
      requested_level: 'comment',
      message: 'Please let me comment',
      status: 'pending',
      resolved_at: null,
      resolved_by_uuid: null,
    });
    expect(rec.last_email_sent_at).toBe(rec.created_at);
    expect(await mine(requester.api, `/documents/${doc.uuid}`)).toEqual(rec);

    for (const who of [doc.owner, doc.manager]) {
      // written in the request's own transaction; listed within the lists' 2 s (contract 14)
      const notes = await withinListLag(async () => {
        const listed = await notificationsOf(who.api);
        expect(listed).toHaveLength(1);
        return listed;
      });
      expect(notes[0]).toMatchObject({
        kind: 'access_request.created',
        recipient_uuid: who.uuid,
        actor_uuid: requester.uuid,
        actor_display_name: 'Rita Requester',
        subject_type: 'access_request',
        subject_uuid: rec.uuid,
        shareable_type: 'documents',
        shareable_uuid: doc.uuid,
        shareable_title: doc.title,
        requested_level: 'comment',
        message: 'Please let me comment',
      });
    }
    // Neither an edit grantee, nor an admin, nor the requester is told (their notices would be in the same
    // transaction as those listed above, so listed by now).
    expect(await notificationsOf(editor.api)).toEqual([]);
    expect((await notificationsOf(t.admin)).filter((n) => n.subject_uuid === rec.uuid)).toEqual([]);
    expect(await notificationsOf(requester.api)).toEqual([]);
    // By e-mail too: exactly one to the owner and one to the manager, and none to anyone else. Counted once the
    // e-mail worker has worked everything the request queued (the marker), not as soon as some e-mail arrived.
    await afterEmailsPass(t);
    const mails = emailsAbout(doc.title);
    expect(mails.map((m) => m.to).sort()).toEqual([[doc.owner.email], [doc.manager.email]].sort());
    for (const who of [doc.owner, doc.manager]) {
      const [mail, ...more] = emailsTo(who.email);
      expect(more).toEqual([]);
      expect(mail!.subject).toContain('Rita Requester');
      expect(mail!.subject).toContain(doc.title);
      expect(mail!.subject.startsWith('Reminder: ')).toBe(false);
      expect(mail!.text).toContain('Please let me comment');
    }
    for (const nobody of [editor.record.email, requester.record.email]) expect(emailsTo(nobody)).toEqual([]);
    // The worker marks each notification once its e-mail went out.
    await eventually(async () => expect((await notificationsOf(doc.owner.api))[0].email_sent_at).not.toBeNull());
  });

  it('upgrades a pending request in place without new notices; never lowers it', async () => {
    const doc = await sharedDoc(t);
    const requester = await t.user();
    const path = `/documents/${doc.uuid}`;
    const created = (await requester.api.post(`${path}/access_requests`, { requested_level: 'view', message: 'first' })).body.data;
    expect(created.outcome).toBe('created');

    const upgraded = await requester.api.post(`${path}/access_requests`, { requested_level: 'edit' });
    expect(upgraded.status).toBe(200);
    expect(upgraded.body.data.outcome).toBe('upgraded');
    expect(upgraded.body.data.record).toMatchObject({
      uuid: created.record.uuid,
      requested_level: 'edit',
      message: 'first',
      created_at: created.record.created_at,
      status: 'pending',
    });

    const lower = (await requester.api.post(`${path}/access_requests`, { requested_level: 'comment' })).body.data;
    expect(lower.outcome).toBe('unchanged');
    expect(lower.record.requested_level).toBe('edit');

    const message = (await requester.api.post(`${path}/access_requests`, { requested_level: 'view', message: 'second' })).body.data;
    expect(message.outcome).toBe('updated');
    expect(message.record).toMatchObject({ uuid: created.record.uuid, requested_level: 'edit', message: 'second' });

    const both = (await requester.api.post(`${path}/access_requests`, { requested_level: 'manage', message: 'third' })).body.data;
    expect(both.outcome).toBe('upgraded');
    expect(both.record).toMatchObject({ requested_level: 'manage', message: 'third' });
    expect(await mine(requester.api, path)).toEqual(both.record);

    await waitForEmails(doc.owner.email, 1);
    await afterEmailsPass(t); // a wrongly queued e-mail has landed by then
    await withinListLag(async () => expect(await notificationsOf(doc.owner.api)).toHaveLength(1));
    expect(emailsTo(doc.owner.email)).toHaveLength(1);
    expect(emailsTo(doc.manager.email)).toHaveLength(1);
  });

  it('is a no-op for a level the caller already holds (owner, admin, grant at or above)', async () => {
    const doc = await sharedDoc(t);
    const editor = await t.user();
    await doc.owner.api.put(`/documents/${doc.uuid}/grants`, { user_uuid: editor.uuid, level: 'edit' });
    const path = `/documents/${doc.uuid}`;
    for (const [api, level] of [
      [doc.owner.api, 'manage'],
      [t.admin, 'manage'],
      [doc.manager.api, 'manage'],
      [editor.api, 'comment'],
      [editor.api, 'edit'],
    ] as const) {
      const res = await api.post(`${path}/access_requests`, { requested_level: level });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ type: 'access_request', record: null, outcome: 'already_satisfied' });
    }
    // Asking for more than the grant is a real request.
    expect((await editor.api.post(`${path}/access_requests`, { requested_level: 'manage' })).body.data.outcome).toBe('created');
    expect((await editor.api.post(`${path}/access_requests`, { requested_level: 'view' })).body.data).toMatchObject({
      outcome: 'already_satisfied',
      record: { requested_level: 'manage', status: 'pending' },
    });
    await afterStreamPasses(); // the stream writes a notice the request's own write missed
    await withinListLag(async () => expect(await notificationsOf(doc.owner.api)).toHaveLength(1));
  });

  it('lets viewers request access, needing no existing access', async () => {
    const doc = await sharedDoc(t);
    const viewer = await t.user({ role: 'viewer' });
    expectError(await viewer.api.get(`/documents/${doc.uuid}`), 403, 'forbidden');
    const res = await viewer.api.post(`/documents/${doc.uuid}/access_requests`, { requested_level: 'view' });
    expect(res.body.data.outcome).toBe('created');
    expect((await mine(viewer.api, `/documents/${doc.uuid}`)).uuid).toBe(res.body.data.record.uuid);
  });

  it('resolves a pending request automatically when a grant satisfies it, not before', async () => {
    const doc = await sharedDoc(t);
    const requester = await t.user();
    const path = `/documents/${doc.uuid}`;
    const created = (await requester.api.post(`${path}/access_requests`, { requested_level: 'edit' })).body.data.record;

    await doc.owner.api.put(`${path}/grants`, { user_uuid: requester.uuid, level: 'comment' });
    expect((await mine(requester.api, path)).uuid).toBe(created.uuid);

    const granted = await doc.manager.api.put(`${path}/grants`, { user_uuid: requester.uuid, level: 'edit' });
    expect(granted.status).toBe(200);
    expect(await mine(requester.api, path)).toBeNull();
    expect((await requester.api.post(`${path}/access_requests/resend`)).body.status).toBe('no_pending_request');
    expect((await requester.api.post(`${path}/access_requests`, { requested_level: 'comment' })).body.data.outcome).toBe(
      'already_satisfied',
    );

    // A later request is a new one, with new notices.
    const next = (await requester.api.post(`${path}/access_requests`, { requested_level: 'manage' })).body.data;
    expect(next.outcome).toBe('created');
    expect(next.record.uuid).not.toBe(created.uuid);
    await withinListLag(async () =>
      expect((await notificationsOf(doc.owner.api)).map((n) => n.subject_uuid)).toEqual([next.record.uuid, created.uuid]),
    );

    // Granting the same level again resolves nothing else and changes nothing.
    const again = await doc.owner.api.put(`${path}/grants`, { user_uuid: requester.uuid, level: 'edit' });
    expect(again.body.data.record.updated_at).toBe(granted.body.data.record.updated_at);
    expect((await mine(requester.api, path)).uuid).toBe(next.record.uuid);
  });

  it('resends at most once an hour from the last e-mail, the creation one included', async () => {
    const doc = await sharedDoc(t);
    const requester = await t.user();
    const path = `/documents/${doc.uuid}`;
    expect((await requester.api.post(`${path}/access_requests/resend`)).body).toEqual({
      status: 'no_pending_request',
      next_resend_at: null,
    });

    const created = (await requester.api.post(`${path}/access_requests`, { requested_level: 'comment' })).body.data.record;
    const throttled = await requester.api.post(`${path}/access_requests/resend`);
    expect(throttled.status).toBe(200);
    expect(throttled.body.status).toBe('throttled');
    expect(Date.parse(throttled.body.next_resend_at)).toBe(Date.parse(created.last_email_sent_at) + 3_600_000);

    await waitForEmails(doc.owner.email, 1);
    await backdateLastEmail(t.tenantUuid, 'document', doc.uuid, requester.uuid);
    const resent = await requester.api.post(`${path}/access_requests/resend`);
    expect(resent.body.status).toBe('resent');
    expect((await requester.api.post(`${path}/access_requests/resend`)).body.status).toBe('throttled');

    const record = await mine(requester.api, path);
    expect(Date.parse(record.last_email_sent_at)).toBe(Date.parse(resent.body.next_resend_at) - 3_600_000);
    for (const who of [doc.owner, doc.manager]) {
      const notes = await withinListLag(async () => {
        const listed = await notificationsOf(who.api);
        expect(listed.map((n) => n.kind)).toEqual(['access_request.resent', 'access_request.created']);
        return listed;
      });
      expect(notes.every((n) => n.subject_uuid === created.uuid)).toBe(true);
    }
    // Once everything queued has gone out (the marker): the creation's e-mail and one reminder to each of the
    // owner and the manager, four in all, and nothing to the requester.
    await afterEmailsPass(t);
    expect(
      emailsAbout(doc.title)
        .map((m) => m.to[0])
        .sort(),
    ).toEqual([doc.owner.email, doc.owner.email, doc.manager.email, doc.manager.email].sort());
    for (const who of [doc.owner, doc.manager]) {
      const mails = emailsTo(who.email);
      expect(mails.map((m) => m.to)).toEqual([[who.email], [who.email]]);
      expect(mails.map((m) => m.subject.startsWith('Reminder: ')).sort()).toEqual([false, true]);
    }
    expect(emailsTo(requester.record.email)).toEqual([]);
  });

  it('creates exactly one request and one set of notices under concurrent requests', async () => {
    const doc = await sharedDoc(t);
    const requester = await t.user();
    const path = `/documents/${doc.uuid}`;
    const results = await Promise.all(
      Array.from({ length: 6 }, () => requester.api.post(`${path}/access_requests`, { requested_level: 'edit' })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
    const outcomes = results.map((r) => r.body.data.outcome);
    expect(outcomes.filter((o) => o === 'created')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'unchanged')).toHaveLength(5);
    expect(new Set(results.map((r) => r.body.data.record.uuid)).size).toBe(1);
    await waitForEmails(doc.owner.email, 1);
    await afterEmailsPass(t);
    // the notices are written in the request's transaction: listed within the lists' 2 s, all or none
    await withinListLag(async () => expect(await notificationsOf(doc.owner.api)).toHaveLength(1));
    await withinListLag(async () => expect(await notificationsOf(doc.manager.api)).toHaveLength(1));
    expect(emailsTo(doc.owner.email)).toHaveLength(1);
  });

  it('gives exactly one resent under concurrent resends', async () => {
    const doc = await sharedDoc(t);
    const requester = await t.user();
    const path = `/documents/${doc.uuid}`;
    await requester.api.post(`${path}/access_requests`, { requested_level: 'view' });
    await backdateLastEmail(t.tenantUuid, 'document', doc.uuid, requester.uuid);
    const results = await Promise.all(Array.from({ length: 6 }, () => requester.api.post(`${path}/access_requests/resend`)));
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
    const statuses = results.map((r) => r.body.status).sort();
    expect(statuses).toEqual(['resent', 'throttled', 'throttled', 'throttled', 'throttled', 'throttled']);
    await waitForEmails(doc.owner.email, 2);
    await afterEmailsPass(t);
    await withinListLag(async () =>
      expect((await notificationsOf(doc.owner.api)).map((n) => n.kind)).toEqual(['access_request.resent', 'access_request.created']),
    );
    expect(emailsTo(doc.owner.email)).toHaveLength(2);
  });

  it('answers 404 across tenants, whichever uuid form is used', async () => {
    const doc = await sharedDoc(t);
    const other = await newTenant();
    const foreigner = await other.user();
    for (const id of [doc.uuid, `${t.tenantUuid}_${doc.uuid}`, `${other.tenantUuid}_${doc.uuid}`]) {
      expectError(await foreigner.api.post(`/documents/${id}/access_requests`, { requested_level: 'view' }), 404, 'not_found');
      expectError(await foreigner.api.get(`/documents/${id}/access_requests/mine`), 404, 'not_found');
      expectError(await foreigner.api.post(`/documents/${id}/access_requests/resend`), 404, 'not_found');
      expectError(await foreigner.api.get(`/documents/${id}`), 404, 'not_found');
      expectError(await other.admin.put(`/documents/${id}/grants`, { user_uuid: foreigner.uuid, level: 'view' }), 404, 'not_found');
    }
    // The owner's own tenant, named with another tenant's prefix, is 404 too.
    expectError(await doc.owner.api.get(`/documents/${other.tenantUuid}_${doc.uuid}`), 404, 'not_found');
    expectError(
      await doc.owner.api.post(`/documents/${other.tenantUuid}_${doc.uuid}/access_requests`, { requested_level: 'view' }),
      404,
      'not_found',
    );
    expectError(
      await doc.owner.api.post(`/documents/${crypto.randomUUID()}/access_requests`, { requested_level: 'view' }),
      404,
      'not_found',
    );
  });

  it('refuses bad bodies: 400 for unknown fields, wrong types and bad JSON, 422 for a bad level', async () => {
    const doc = await sharedDoc(t);
    const requester = await t.user();
    const url = `/documents/${doc.uuid}/access_requests`;
    const unknown = expectError(
      await requester.api.post(url, { requested_level: 'view', requester_uuid: doc.owner.uuid }),
      400,
      'bad_request',
    );
    expect(unknown.details.map((d) => d.field)).toEqual(['requester_uuid']);
    expectError(await requester.api.post(url, { requested_level: 3 }), 400, 'bad_request');
    expectError(await requester.api.post(url, {}), 400, 'bad_request');
    expectError(await requester.api.post(url, { requested_level: 'view', message: 42 }), 400, 'bad_request');
    expectError(
      await requester.api.request('POST', url, '{"requested_level":', { 'content-type': 'application/json' }),
      400,
      'bad_request',
    );
    expectError(await requester.api.post(url, { requested_level: 'admin' }), 422, 'validation_failed');
    expectError(await requester.api.post(url, { requested_level: 'view', message: 'x'.repeat(2001) }), 422, 'validation_failed');
    expectError(await requester.api.post(`${url}/resend`, { force: true }), 400, 'bad_request');
    expect(await mine(requester.api, `/documents/${doc.uuid}`)).toBeNull();
  });
});

describe('GET /notifications', () => {
  it("lists only the caller's notifications, newest first, paginated", async () => {
    const t = await newTenant();
    const doc = await sharedDoc(t, 'playbooks');
    const requesters = [await t.user(), await t.user(), await t.user()];
    const uuids: string[] = [];
    for (const r of requesters)
      uuids.push((await r.api.post(`/playbooks/${doc.uuid}/access_requests`, { requested_level: 'view' })).body.data.record.uuid);

    // the notices were written with the requests; the list shows them within its 2 s (contract 14)
    const page1 = await withinListLag(async () => {
      const res = await doc.owner.api.get('/notifications?per_page=2&count=true');
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        type: 'notification',
        checks: {},
        filters: {},
        pagy: { page: 1, per_page: 2, next: 2, prev: null, count: 3 },
      });
      return res;
    });
    const page2 = await doc.owner.api.get('/notifications?per_page=2&page=2');
    expect(page2.body.data.pagy.next).toBeNull();
    const all = [...page1.body.data.records, ...page2.body.data.records];
    expect(all.map((n) => n.subject_uuid)).toEqual([...uuids].reverse());
    expect(all.every((n) => n.recipient_uuid === doc.owner.uuid && n.shareable_type === 'playbooks')).toBe(true);

    const oldestFirst = await listAll(doc.owner.api, '/notifications?q[s]=created_at%20asc');
    expect(oldestFirst.map((n) => n.subject_uuid)).toEqual(uuids);
    const filtered = await listAll(doc.owner.api, `/notifications?q[actor_uuid_eq]=${requesters[1]!.uuid}`);
    expect(filtered.map((n) => n.subject_uuid)).toEqual([uuids[1]]);
    expect(await listAll(requesters[0]!.api, '/notifications')).toEqual([]);
    expectError(await doc.owner.api.get('/notifications?q[recipient_uuid_eq]=x'), 400, 'bad_request');
    expectError(await doc.owner.api.get('/notifications?per_page=-1'), 400, 'bad_request');
  });
});
