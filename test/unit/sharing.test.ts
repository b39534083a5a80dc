import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { shareableAccess, shareableEntryVisibility } from '#shared/domain/sharing/access.ts';
import { shareableEntity, type NotificationRecord, type ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { accessRequestNotifyHandler as accessRequestEmailHandler } from '#functions/workers/access-request-notify.ts';
import type { AccessRequestEmailMessage, InboxPort, MailDeps } from '#shared/domain/sharing/mail.ts';
import { higherLevel, resourceUuidOf, satisfies, shareablePathOfRoute } from '#shared/domain/sharing/types.ts';
import type { UserRecord } from '#shared/domain/users/entity.ts';
import type { Email } from '#shared/email/mailer.ts';
import { NotFoundError } from '#shared/errors.ts';

const TENANT = '11111111-1111-4111-8111-111111111111';
const RESOURCE = '22222222-2222-4222-8222-222222222222';

describe('shareable names and levels', () => {
  it('orders levels view < comment < edit < manage', () => {
    expect(satisfies('edit', 'comment')).toBe(true);
    expect(satisfies('comment', 'comment')).toBe(true);
    expect(satisfies('view', 'comment')).toBe(false);
    expect(satisfies(null, 'view')).toBe(false);
    expect(higherLevel('view', 'manage')).toBe('manage');
    expect(higherLevel('edit', 'comment')).toBe('edit');
  });

  it('reads the resource uuid from either shareable_uuid form; any other tenant or shape is 404', () => {
    expect(resourceUuidOf(TENANT, RESOURCE, 'documents')).toBe(RESOURCE);
    expect(resourceUuidOf(TENANT, `${TENANT}_${RESOURCE}`, 'documents')).toBe(RESOURCE);
    expect(resourceUuidOf(TENANT, `${TENANT.toUpperCase()}_${RESOURCE.toUpperCase()}`, 'documents')).toBe(RESOURCE);
    for (const bad of [`33333333-3333-4333-8333-333333333333_${RESOURCE}`, `_${RESOURCE}`, 'nope', `${TENANT}_nope`, `${RESOURCE}_`]) {
      expect(() => resourceUuidOf(TENANT, bad, 'documents'), bad).toThrow(NotFoundError);
    }
  });

  it('lists a shareable exactly when the caller holds a level on it: one rule for records and index entries', () => {
    const s = {
      uuid: RESOURCE,
      type: 'document',
      title: 'T',
      content: null,
      owner_uuid: 'u-owner',
      grants: [{ user_uuid: 'u-grantee', level: 'view', granted_by_uuid: 'u-owner', granted_at: '' }],
      created_at: '',
      updated_at: '',
    } as ShareableRecord;
    const entry = { id: RESOURCE, sortKey: '', ...shareableEntity.envelope!(s) };
    for (const [userId, role] of [
      ['u-owner', 'member'],
      ['u-grantee', 'viewer'],
      ['u-stranger', 'member'],
      ['u-admin', 'admin'],
    ] as const) {
      const caller = { tenantId: TENANT, userId, role, user: {} as UserRecord };
      expect(shareableEntryVisibility(caller)(entry), userId).toBe(shareableAccess(caller, s).level !== null);
    }
  });

  it('reads the shareable type from the route key', () => {
    expect(shareablePathOfRoute('POST /okrs-dashboards')).toBe('okrs-dashboards');
    expect(shareablePathOfRoute('GET /explorer-views/{shareable_uuid}/access_requests/mine')).toBe('explorer-views');
    expect(() => shareablePathOfRoute('GET /notifications')).toThrow();
  });
});

// ---------- the e-mail worker ----------

const user = (uuid: string, email: string, status: 'active' | 'inactive' = 'active') => ({ uuid, email, status }) as UserRecord;
const note = (uuid: string, recipient: string, emailed: string | null = null) =>
  ({ uuid, recipient_uuid: recipient, email_sent_at: emailed }) as NotificationRecord;

/** An in-memory tenant: notifications and users by uuid; markEmailed records what the worker marked, as the store does (version-checked). */
function fakeInbox(notes: NotificationRecord[], users: UserRecord[]) {
  const byId = new Map(notes.map((n) => [n.uuid, { ...n }]));
  const versions = new Map(notes.map((n) => [n.uuid, 1]));
  const calls = { notification: 0, users: 0, markEmailed: 0 };
  const port: InboxPort = {
    notification: async (id) => {
      calls.notification++;
      const n = byId.get(id);
      return n && { record: { ...n }, version: versions.get(id)! };
    },
    users: async (ids) => {
      calls.users++;
      return new Map(users.filter((u) => ids.includes(u.uuid)).map((u) => [u.uuid, u]));
    },
    markEmailed: async (note, at) => {
      calls.markEmailed++;
      if (versions.get(note.record.uuid) !== note.version) throw new Error('ConcurrentUpdate');
      versions.set(note.record.uuid, note.version + 1);
      byId.get(note.record.uuid)!.email_sent_at = at;
    },
  };
  return { port, byId, calls };
}

const message = (over: Partial<AccessRequestEmailMessage> = {}): AccessRequestEmailMessage => ({
  version: 1,
  tenant_uuid: TENANT,
  event: 'access_request.created',
  access_request_uuid: 'req-1',
  shareable: { type: 'documents', uuid: RESOURCE, title: 'Roadmap' },
  requester: { uuid: 'u-req', display_name: 'Rita', email: 'rita@example.test' },
  requested_level: 'edit',
  message: 'please',
  deliveries: [
    { recipient_uuid: 'u-owner', notification_uuid: 'n-owner' },
    { recipient_uuid: 'u-manager', notification_uuid: 'n-manager' },
  ],
  ...over,
});

const sqsRecord = (messageId: string, body: string): SQSRecord =>
  ({
    messageId,
    receiptHandle: messageId,
    body,
    attributes: { ApproximateReceiveCount: '1' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn',
    awsRegion: 'local',
  }) as unknown as SQSRecord;
const sqsEvent = (...records: SQSRecord[]): SQSEvent => ({ Records: records });

describe('access request e-mail worker', () => {
  const users = [
    user('u-owner', 'owner@example.test'),
    user('u-manager', 'manager@example.test'),
    user('u-gone', 'gone@example.test', 'inactive'),
  ];

  it('e-mails each recipient once and marks the notification', async () => {
    const { port, byId } = fakeInbox([note('n-owner', 'u-owner'), note('n-manager', 'u-manager')], users);
    const sent: Email[] = [];
    const handler = accessRequestEmailHandler({ inbox: async () => port, send: async (e) => (sent.push(e), 'id') });
    const res = await handler(sqsEvent(sqsRecord('m1', JSON.stringify(message()))));
    expect(res).toEqual({ batchItemFailures: [] });
    expect(sent.map((e) => e.to)).toEqual([['owner@example.test'], ['manager@example.test']]);
    expect(sent[0]!.subject).toBe('Rita requests edit access to "Roadmap"');
    expect(sent[0]!.text).toContain('please');
    expect(byId.get('n-owner')!.email_sent_at).not.toBeNull();
    // Redelivery of the same message sends nothing more.
    await handler(sqsEvent(sqsRecord('m1', JSON.stringify(message()))));
    expect(sent).toHaveLength(2);
  });

  it('reports only the failed messages of a batch, and a retry resumes where the failure stopped', async () => {
    const { port, byId } = fakeInbox([note('n-owner', 'u-owner'), note('n-manager', 'u-manager'), note('n-other', 'u-owner')], users);
    const sent: string[] = [];
    let managerDown = true;
    const deps: MailDeps = {
      inbox: async () => port,
      send: async (e) => {
        if (managerDown && e.to[0] === 'manager@example.test') throw new Error('SES throttled');
        sent.push(e.to[0]!);
        return 'id';
      },
    };
    const handler = accessRequestEmailHandler(deps);
    const ok = message({ access_request_uuid: 'req-2', deliveries: [{ recipient_uuid: 'u-owner', notification_uuid: 'n-other' }] });
    const res = await handler(
      sqsEvent(
        sqsRecord('bad-json', '{not json'),
        sqsRecord('fails', JSON.stringify(message())),
        sqsRecord('ok', JSON.stringify(ok)),
        sqsRecord('bad-shape', JSON.stringify({ version: 2 })),
      ),
    );
    expect(res).toEqual({
      batchItemFailures: [{ itemIdentifier: 'bad-json' }, { itemIdentifier: 'fails' }, { itemIdentifier: 'bad-shape' }],
    });
    expect(sent).toEqual(['owner@example.test', 'owner@example.test']);
    expect(byId.get('n-manager')!.email_sent_at).toBeNull();

    managerDown = false;
    expect(await handler(sqsEvent(sqsRecord('fails', JSON.stringify(message()))))).toEqual({ batchItemFailures: [] });
    // The owner, already e-mailed for this message, is not e-mailed again.
    expect(sent).toEqual(['owner@example.test', 'owner@example.test', 'manager@example.test']);
  });

  it('reads each notification once and the recipients in one batch; marks without reading again', async () => {
    const { port, calls } = fakeInbox([note('n-owner', 'u-owner'), note('n-manager', 'u-manager')], users);
    const handler = accessRequestEmailHandler({ inbox: async () => port, send: async () => 'id' });
    expect(await handler(sqsEvent(sqsRecord('m1', JSON.stringify(message()))))).toEqual({ batchItemFailures: [] });
    expect(calls).toEqual({ notification: 2, users: 1, markEmailed: 2 });
    // A redelivery finds both marked: no user read, no mark.
    await handler(sqsEvent(sqsRecord('m1', JSON.stringify(message()))));
    expect(calls).toEqual({ notification: 4, users: 1, markEmailed: 2 });
  });

  it('skips inactive or unknown recipients and missing notifications, and words reminders', async () => {
    const { port } = fakeInbox([note('n-gone', 'u-gone'), note('n-owner', 'u-owner'), note('n-ghost', 'u-ghost')], users);
    const sent: Email[] = [];
    const handler = accessRequestEmailHandler({ inbox: async () => port, send: async (e) => (sent.push(e), 'id') });
    const msg = message({
      event: 'access_request.resent',
      message: null,
      deliveries: [
        { recipient_uuid: 'u-gone', notification_uuid: 'n-gone' },
        { recipient_uuid: 'u-ghost', notification_uuid: 'n-ghost' },
        { recipient_uuid: 'u-owner', notification_uuid: 'n-missing' },
        { recipient_uuid: 'u-owner', notification_uuid: 'n-owner' },
      ],
    });
    expect(await handler(sqsEvent(sqsRecord('m', JSON.stringify(msg))))).toEqual({ batchItemFailures: [] });
    expect(sent.map((e) => e.to[0])).toEqual(['owner@example.test']);
    expect(sent[0]!.subject).toBe('Reminder: Rita requests edit access to "Roadmap"');
    expect(sent[0]!.text).not.toContain('Their message');
  });
});
