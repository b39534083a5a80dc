import { beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { newDbMetrics, withDbMetrics } from '#shared/db/metrics.ts';
import { createEntity } from '../support/seed.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { notificationEntity, type NotificationRecord } from '#shared/domain/sharing/entity.ts';
import { deliverAccessRequestEmails, storeInbox, type AccessRequestEmailMessage } from '#shared/domain/sharing/mail.ts';
import type { Email } from '#shared/email/mailer.ts';
import { newTenant, type TenantFixture } from '../support/api.ts';

/**
 * The access-request e-mail delivery against the real table (DynamoDB Local), run in this process with a
 * recording mailer: the notifications are written here, not by the API, so the local stack's own worker
 * never sees them.
 */
describe('access request e-mail delivery on the real table', () => {
  let t: TenantFixture;
  let ctx: DataCtx;
  let recipients: Array<{ uuid: string; record: any }>;
  beforeAll(async () => {
    t = await newTenant();
    ctx = { tenantId: t.tenantUuid, db: baseDb() };
    recipients = await Promise.all([t.user(), t.user(), t.user()]);
  });

  async function notice(recipient: string): Promise<NotificationRecord> {
    const now = new Date().toISOString();
    const n: NotificationRecord = {
      uuid: crypto.randomUUID(),
      kind: 'access_request.created',
      recipient_uuid: recipient,
      actor_uuid: t.adminUuid,
      actor_display_name: 'Admin',
      subject_type: 'access_request',
      subject_uuid: 'req',
      shareable_type: 'documents',
      shareable_uuid: crypto.randomUUID(),
      shareable_title: 'Roadmap',
      requested_level: 'edit',
      message: null,
      email_sent_at: null,
      created_at: now,
      updated_at: now,
    };
    await createEntity(ctx, notificationEntity, n);
    return n;
  }

  it('reads each notification once and the recipients in one batch, and marks each e-mail with one write', async () => {
    const notes = await Promise.all(recipients.map((r) => notice(r.uuid)));
    const msg: AccessRequestEmailMessage = {
      version: 1,
      tenant_uuid: t.tenantUuid,
      event: 'access_request.created',
      access_request_uuid: 'req',
      shareable: { type: 'documents', uuid: notes[0]!.shareable_uuid, title: 'Roadmap' },
      requester: { uuid: t.adminUuid, display_name: 'Admin', email: 'admin@example.test' },
      requested_level: 'edit',
      message: null,
      deliveries: notes.map((n) => ({ recipient_uuid: n.recipient_uuid, notification_uuid: n.uuid })),
    };
    const sent: Email[] = [];
    const deps = { inbox: async () => storeInbox(ctx), send: async (e: Email) => (sent.push(e), 'id') };

    const first = newDbMetrics();
    expect(await withDbMetrics(first, () => deliverAccessRequestEmails(msg, deps))).toEqual({
      access_request_uuid: 'req',
      sent: 3,
      skipped: 0,
    });
    expect(sent.map((e) => e.to[0]).sort()).toEqual(recipients.map((r) => r.record.email).sort());
    expect(first.calls).toBe(3 + 1 + 3); // notifications, one BatchGet of the users, one write per e-mail (calls: concurrent ones count in `roundTrips` once)
    for (const n of notes) expect((await getEntity(ctx, notificationEntity, n.uuid))!.record.email_sent_at).not.toBeNull();

    // A redelivery reads the notifications, finds them marked, and does nothing else.
    const again = newDbMetrics();
    expect(await withDbMetrics(again, () => deliverAccessRequestEmails(msg, deps))).toEqual({
      access_request_uuid: 'req',
      sent: 0,
      skipped: 3,
    });
    expect(again.calls).toBe(3);
    expect(sent).toHaveLength(3);
  });
});
