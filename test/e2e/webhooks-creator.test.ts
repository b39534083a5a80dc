import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { CREATOR_REFUSAL, fanOut } from '#shared/domain/webhooks/deliveries.ts';
import { webhookEntity } from '#shared/domain/webhooks/entity.ts';
import { createPeriod, goal } from './goals.fixture.ts';
import { listAll, newTenant, type TenantFixture } from '../support/api.ts';
import { deliveryWorkerQueues, eventually, startReceiver } from './webhooks.fixture.ts';

// The worker in this process follows the same short schedule the local stack uses in tests (test/setup/global.ts).
Object.assign(process.env, { WEBHOOK_ALLOW_LOCAL_HTTP: 'true', WEBHOOK_RETRY_SCHEDULE: '1,2', WEBHOOK_TIMEOUT_MS: '4000' });

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
const goalsCreated = (r: Receiver, uuid: string) =>
  r.events().filter((e) => e.event.type === 'goal.created' && e.event.data.record.uuid === uuid);

/**
 * A webhook acts for the admin who created it (contract section 12: webhooks are admins'). Demoted or
 * deactivated, that admin's endpoints stop: through the change stream (the creators projection disables them and
 * tells the other admins) and, for events already in flight, in the delivery worker before each POST.
 */
describe("a webhook does not outlive its creator's admin rights", () => {
  let t: TenantFixture;
  let period: string;
  beforeAll(async () => {
    t = await newTenant();
    period = (await createPeriod(t.admin, 'H1', '2026-01-01', '2026-06-30')).uuid;
  });

  const cases = [
    ['demoted to member', { role: 'member' }],
    ['deactivated', { status: 'inactive' }],
  ] as const;
  for (const [how, change] of cases) {
    it(`an admin ${how}: their webhook gets no later event, reads back disabled, the other admins are told; re-enabled, it is the re-enabler's`, async () => {
      const [creator, otherAdmin, member] = await Promise.all([
        t.user({ role: 'admin' }),
        t.user({ role: 'admin' }),
        t.user({ role: 'member' }),
      ]);
      const [mine, marker] = await Promise.all([startReceiver(), startReceiver()]);
      try {
        // The creator's endpoint first: a fan-out reaches the tenant's endpoints oldest first, so once the marker
        // has an event, the creator's delivery of it exists (or the fan-out found the endpoint disabled already).
        const w = (await creator.api.post('/webhooks', { url: mine.url, events: ['goal.created'] })).body.data.record;
        expect(w.status).toBe('active');
        expect((await t.admin.post('/webhooks', { url: marker.url, events: ['goal.created'] })).status).toBe(201);
        // Subscribed to a type this tenant never makes: no delivery reaches the worker, so only the stream can disable it.
        const quiet = (await creator.api.post('/webhooks', { url: mine.url, events: ['access_request.created'] })).body.data.record;
        const before = await goal(t.admin, 'objectives', { title: 'Before', time_period_uuid: period });
        await eventually(
          () => (goalsCreated(mine, before.uuid).length && goalsCreated(marker, before.uuid).length ? true : undefined),
          60_000,
          'the event before',
        );

        expect((await t.admin.put(`/rest/v2/users/${creator.uuid}`, { user: change })).status).toBe(200);
        const after = await goal(t.admin, 'objectives', { title: 'After', time_period_uuid: period, visibility: 'limited' });
        await eventually(() => (goalsCreated(marker, after.uuid).length ? true : undefined), 60_000, 'the marker');
        // Whatever the creator's endpoint got of it is settled: refused (or never made), not sent.
        const settled = await eventually(
          async () => {
            const ds = await listAll(t.admin, `/webhooks/${w.uuid}/deliveries`);
            return ds.every((d) => d.status !== 'pending') ? ds : undefined;
          },
          60_000,
          'no delivery pending',
        );
        expect(goalsCreated(mine, after.uuid)).toEqual([]);
        expect(settled.filter((d) => d.status === 'succeeded')).toHaveLength(1); // the event before only
        for (const d of settled.filter((x) => x.status === 'failed')) expect(d).toMatchObject({ attempts: 0, delivered_at: null });

        const disabled = await eventually(
          async () => {
            const r = (await t.admin.get(`/webhooks/${w.uuid}`)).body.data.record;
            return r.status === 'disabled' ? r : undefined;
          },
          60_000,
          'disabled',
        );
        expect(disabled).toMatchObject({ uuid: w.uuid, status: 'disabled' });
        await eventually(
          async () => ((await t.admin.get(`/webhooks/${quiet.uuid}`)).body.data.record.status === 'disabled' ? true : undefined),
          60_000,
          'the quiet one disabled',
        );
        for (const api of [t.admin, otherAdmin.api])
          for (const endpoint of [w, quiet]) {
            const notes = await eventually(
              async () => {
                const n = (await listAll(api, '/notifications')).filter(
                  (x) => x.kind === 'webhook.disabled' && x.subject_uuid === endpoint.uuid,
                );
                return n.length ? n : undefined;
              },
              30_000,
              'the notice',
            );
            expect(notes).toHaveLength(1);
            expect(notes[0]).toMatchObject({ subject_type: 'webhook', actor_uuid: null, shareable_uuid: null });
            expect(notes[0].message).toContain('creator_lost_access');
            expect(notes[0].message).toContain(mine.url);
          }
        expect((await listAll(member.api, '/notifications')).filter((n) => n.kind === 'webhook.disabled')).toEqual([]);
        if ('role' in change)
          expect((await listAll(creator.api, '/notifications')).filter((n) => n.kind === 'webhook.disabled')).toEqual([]);

        // An admin turns it on again and becomes its creator: the next event is delivered.
        expect((await t.admin.put(`/webhooks/${w.uuid}`, { status: 'active' })).body.data.record.status).toBe('active');
        const again = await goal(t.admin, 'objectives', { title: 'Again', time_period_uuid: period });
        await eventually(() => (goalsCreated(mine, again.uuid).length ? true : undefined), 60_000, 'the event after re-enabling');
        expect((await t.admin.get(`/webhooks/${w.uuid}`)).body.data.record.status).toBe('active');
      } finally {
        await Promise.all([mine.stop(), marker.stop()]);
      }
    });
  }

  describe('in the delivery worker, before every POST', () => {
    const queues = deliveryWorkerQueues();
    let ctx: DataCtx;
    beforeAll(() => {
      ctx = { tenantId: t.tenantUuid, db: baseDb() };
      queues.start();
    });
    afterAll(() => queues.stop());

    it('an endpoint whose creator is not an admin (no user change for the stream to act on) is never sent to, and is disabled', async () => {
      const [member, otherAdmin] = await Promise.all([t.user({ role: 'member' }), t.user({ role: 'admin' })]);
      const receiver = await startReceiver();
      try {
        // Subscribed to a type this test's tenant never makes from the stream: only the event below reaches it.
        const w = (await t.admin.post('/webhooks', { url: receiver.url, events: ['access_request.created'] })).body.data.record;
        const stored = (await getEntity(ctx, webhookEntity, w.uuid, true))!;
        await new WriteTx(ctx).replace(webhookEntity, stored, { ...stored.record, creator_uuid: member.uuid }).commit();
        const id = `evt_${crypto.randomUUID().replace(/-/g, '')}`;
        const record = { uuid: crypto.randomUUID(), status: 'pending' };
        expect(
          await fanOut(
            ctx,
            [
              {
                id,
                event: { type: 'access_request.created', timestamp: new Date().toISOString(), data: { tenant_uuid: t.tenantUuid, record } },
              },
            ],
            queues,
          ),
        ).toBe(1);
        const [d] = await eventually(
          async () => {
            const ds = await listAll(t.admin, `/webhooks/${w.uuid}/deliveries`);
            return ds.length && ds[0].status !== 'pending' ? ds : undefined;
          },
          20_000,
          'the attempt',
        );
        expect(d).toMatchObject({ event_id: id, status: 'failed', attempts: 0, last_error: CREATOR_REFUSAL, delivered_at: null });
        expect(receiver.received).toEqual([]);
        expect((await t.admin.get(`/webhooks/${w.uuid}`)).body.data.record.status).toBe('disabled');
        const notes = (await listAll(otherAdmin.api, '/notifications')).filter(
          (n) => n.kind === 'webhook.disabled' && n.subject_uuid === w.uuid,
        );
        expect(notes).toHaveLength(1);
        expect(notes[0].message).toContain('creator_lost_access');
        expect((await listAll(member.api, '/notifications')).filter((n) => n.kind === 'webhook.disabled')).toEqual([]);
      } finally {
        await receiver.stop();
      }
    });
  });
});
