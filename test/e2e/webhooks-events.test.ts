import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPayload } from '#shared/domain/webhooks/signature.ts';
import { C, checkin, goalNow } from './checkins.fixture.ts';
import { createPeriod, goal, P } from './goals.fixture.ts';
import { newTenant, type TenantFixture } from '../support/api.ts';
import { deliveriesSettled, eventually, startReceiver } from './webhooks.fixture.ts';
import { afterStreamPasses } from '../support/stream-marker.ts';

type Got = {
  id: string;
  event: { type: string; timestamp: string; data: { tenant_uuid: string; record: any; previous?: Record<string, unknown> } };
};

/**
 * End to end through the change stream: API writes → DynamoDB Local's stream → the local poller → the
 * events projection → the delivery queue → the worker → a receiver on 127.0.0.1.
 */
describe('events from the change stream to a registered webhook', () => {
  let a: TenantFixture;
  let b: TenantFixture;
  let receiverA: Awaited<ReturnType<typeof startReceiver>>;
  let receiverB: Awaited<ReturnType<typeof startReceiver>>;
  let secretA: string;
  let hookA: string;
  let hookB: string;
  beforeAll(async () => {
    [a, b] = await Promise.all([newTenant(), newTenant()]);
    [receiverA, receiverB] = await Promise.all([startReceiver(), startReceiver()]);
    const createdA = (await a.admin.post('/webhooks', { url: receiverA.url, events: ['*'] })).body.data.record;
    [secretA, hookA] = [createdA.secret, createdA.uuid];
    hookB = (await b.admin.post('/webhooks', { url: receiverB.url, events: ['*'] })).body.data.record.uuid;
  });
  afterAll(async () => {
    await receiverA.stop();
    await receiverB.stop();
  });

  const find = (type: string, uuid: string, where: (e: Got) => boolean = () => true) =>
    receiverA.events().filter((e: Got) => e.event.type === type && e.event.data.record.uuid === uuid && where(e)) as Got[];
  const arrives = (type: string, uuid: string, where?: (e: Got) => boolean) =>
    eventually(
      () => {
        const found = find(type, uuid, where);
        return found.length ? found : undefined;
      },
      60_000,
      `${type} of ${uuid}`,
    );

  it('sends every change once, signed, with the record as the API returns it, rollups included; nothing of another tenant', async () => {
    const period = await createPeriod(a.admin, 'H1', '2026-01-01', '2026-06-30');
    const O = await goal(a.admin, 'objectives', { title: 'Win the market', time_period_uuid: period.uuid });
    const oRollup = await a.admin.put(P('objectives', O.uuid), { progress_mode: 'rollup' });
    expect(oRollup.status).toBe(200);
    const K = await goal(a.admin, 'key_results', {
      title: 'Grow ARR',
      time_period_uuid: period.uuid,
      parents: [O.uuid],
      metric: { start_value: 0, target_value: 10, metric_type: 'reach' },
    });
    const I = await goal(a.admin, 'initiatives', { title: 'Side quest', time_period_uuid: period.uuid });
    const ci = await checkin(a.admin, { goal_uuid: K.uuid, value: 4, checkin_date: '2026-02-01' });
    const oAfterCheckin = await goalNow(a.admin, O);
    expect(oAfterCheckin.current_progress).toBe(40);
    const renamed = await a.admin.put(P('key_results', K.uuid), { title: 'Grow ARR to 2M' });
    expect(renamed.status).toBe(200);
    const ciUpdated = await a.admin.put(C(ci.uuid), { note: 'Two deals closed' });
    expect(ciUpdated.status).toBe(200);
    const deletedI = await a.admin.delete(P('initiatives', I.uuid));
    expect(deletedI.status).toBe(200);
    const ciDeleted = await a.admin.delete(C(ci.uuid));
    expect(ciDeleted.status).toBe(200);
    const doc = (await a.admin.post('/documents', { title: 'QBR deck' })).body.data.record;
    const requester = await a.user({ role: 'member' });
    const request = await requester.api.post(`/documents/${doc.uuid}/access_requests`, { requested_level: 'edit', message: 'For the QBR' });
    expect(request.body.data.outcome).toBe('created');
    const bGoal = await goal(b.admin, 'objectives', {
      title: 'Tenant B secret plan',
      time_period_uuid: (await createPeriod(b.admin, 'B', '2026-01-01', '2026-06-30')).uuid,
    });

    // created: the record as the create answered it
    expect((await arrives('goal.created', O.uuid))[0]!.event.data.record).toEqual(O);
    expect((await arrives('goal.created', K.uuid))[0]!.event.data.record).toEqual(K);
    expect((await arrives('checkin.created', ci.uuid))[0]!.event.data.record).toEqual(ci);
    // updated: the record as the update answered it, with the old values of what changed
    const oUpdated = (await arrives('goal.updated', O.uuid, (e) => e.event.data.record.progress_mode === 'rollup'))[0]!;
    expect(oUpdated.event.data.previous).toEqual({ progress_mode: 'manual' });
    const kUpdated = (await arrives('goal.updated', K.uuid))[0]!;
    expect(kUpdated.event.data.record).toEqual(renamed.body.data.record);
    expect(kUpdated.event.data.previous).toMatchObject({ title: 'Grow ARR' }); // and what derives from it (searchable_content)
    expect(Object.keys(kUpdated.event.data.previous!)).not.toContain('updated_at');
    const ciUpd = (await arrives('checkin.updated', ci.uuid))[0]!;
    expect(ciUpd.event.data.record).toEqual(ciUpdated.body);
    expect(ciUpd.event.data.previous).toEqual({ note: null });
    // progress: the leaf's check-in moves the leaf and, by rollup, its parent
    const kProgress = (await arrives('goal.progress_changed', K.uuid, (e) => e.event.data.record.current_progress === 40))[0]!;
    expect(kProgress.event.data.previous).toMatchObject({ current_progress: null });
    const oProgress = (await arrives('goal.progress_changed', O.uuid, (e) => e.event.data.record.current_progress === 40))[0]!;
    expect(oProgress.event.data.record).toEqual(oAfterCheckin);
    expect(oProgress.event.data.previous).toMatchObject({ current_progress: 0 });
    // deletes
    expect((await arrives('goal.deleted', I.uuid))[0]!.event.data.record).toEqual(deletedI.body);
    expect((await arrives('checkin.deleted', ci.uuid))[0]!.event.data.record.uuid).toBe(ci.uuid);
    await arrives('goal.progress_changed', O.uuid, (e) => e.event.data.record.current_progress === 0); // the rollup follows the delete
    // access request
    expect((await arrives('access_request.created', request.body.data.record.uuid))[0]!.event.data.record).toEqual(
      request.body.data.record,
    );

    // Every event once (by id), signed with this endpoint's secret, this tenant's only.
    await eventually(
      () => (receiverB.events().some((e: Got) => e.event.data.record.uuid === bGoal.uuid) ? true : undefined),
      30_000,
      "tenant B's own event",
    );
    // Before the checks of what did not arrive: every change above applied by the stream (what it queued is
    // queued), then a marker goal of each tenant, queued after all of it on the delivery queue, delivered.
    await afterStreamPasses();
    const markerPeriod = (tenant: TenantFixture) => createPeriod(tenant.admin, 'Marker', '2026-01-01', '2026-06-30');
    const [markA, markB] = await Promise.all(
      [a, b].map(async (tenant) =>
        goal(tenant.admin, 'objectives', { title: 'marker', time_period_uuid: (await markerPeriod(tenant)).uuid }),
      ),
    );
    await arrives('goal.created', markA!.uuid);
    await eventually(
      () =>
        receiverB.events().some((e: Got) => e.event.type === 'goal.created' && e.event.data.record.uuid === markB!.uuid) ? true : undefined,
      60_000,
      "tenant B's marker",
    );
    // the worker sends a batch at once: the markers may arrive before what was queued with them
    await Promise.all([deliveriesSettled(a.admin, hookA), deliveriesSettled(b.admin, hookB)]);
    const ids = receiverA.received.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of receiverA.received) {
      expect(r.headers['webhook-signature']).toBe(
        signPayload(secretA, r.headers['webhook-id'] as string, Number(r.headers['webhook-timestamp']), r.body),
      );
      expect(JSON.parse(r.body).data.tenant_uuid).toBe(a.tenantUuid);
      expect(Object.keys(JSON.parse(r.body)).sort()).toEqual(['data', 'timestamp', 'type']);
    }
    expect(JSON.stringify(receiverA.received.map((r) => r.body))).not.toContain(bGoal.uuid);
    expect(receiverB.events().every((e: Got) => e.event.data.tenant_uuid === b.tenantUuid)).toBe(true);
    expect(JSON.stringify(receiverB.received.map((r) => r.body))).not.toContain(O.uuid);
  }, 240_000); // some thirty writes, each event waited for through the stream and the queue
});
