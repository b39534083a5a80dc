import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { config } from '#shared/config.ts';
import { createDynamoClient, instrument } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { mutateEntity } from '#shared/command/run.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { checkinEntity, checkinOrderItemKey, checkinOrderKey, type CheckinRecord } from '#shared/domain/checkins/entity.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { accessRequestKey } from '#shared/domain/sharing/entity.ts';
import { logger } from '#shared/logger.ts';
import { installLocalQueues, type LocalQueues } from '#shared/queue/queue.ts';
import { streamProcessor } from '#shared/stream/processor.ts';
import { projections } from '#shared/stream/projections.ts';
import { listAll, newTenant, type TenantFixture } from '../support/api.ts';
import { goal, goalTenant, P, type GoalTenant } from './goals.fixture.ts';
import { checkin, goalNow } from './checkins.fixture.ts';
import { eventually } from '../support/eventually.ts';
import { streamRecord } from '../support/stream-records.ts';

/**
 * The change stream as the backstop of derived state. "A function died between its commit and its refresh"
 * is simulated by writing through the store directly (what the request path commits, without what it does
 * afterwards); the local stack's stream poller must bring the derived state up to date on its own. Replays
 * run the processor in this process on stream records built from the items as stored.
 */

const data = (tenantId: string): DataCtx => ({ tenantId, db: instrument(createDynamoClient()) });

async function rawItem(key: { PK: string; SK: string }) {
  return (await data('x').db.send(new GetCommand({ TableName: config.tableName, Key: key, ConsistentRead: true }))).Item!;
}

/** The processor with a recording queue in this process (the local stack's own queues are out of reach). */
function processorWithQueue() {
  const sent: Array<{ queue: string; body: any }> = [];
  installLocalQueues({
    send: async (queue: string, body: unknown) => (sent.push({ queue, body }), randomUUID()),
  } as unknown as LocalQueues);
  const handler = streamProcessor({ projections, data: async (tenantId) => data(tenantId), log: logger });
  return { handler, sent };
}

describe('derived state from the change stream', () => {
  let t: TenantFixture;
  let period: GoalTenant['period'];
  beforeAll(async () => {
    ({ t, period } = await goalTenant());
  });

  /** Objective ← key result ← two initiatives, objective and key result in rollup mode. */
  async function hierarchy() {
    const O = await goal(t.admin, 'objectives', { title: 'O', time_period_uuid: period.uuid });
    const K = await goal(t.admin, 'key_results', { title: 'K', time_period_uuid: period.uuid, parents: [O.uuid] });
    const I1 = await goal(t.admin, 'initiatives', { title: 'I1', time_period_uuid: period.uuid, parents: [K.uuid] });
    const I2 = await goal(t.admin, 'initiatives', { title: 'I2', time_period_uuid: period.uuid, parents: [K.uuid] });
    expect((await t.admin.put(P('objectives', O.uuid), { progress_mode: 'rollup' })).status).toBe(200);
    expect((await t.admin.put(P('key_results', K.uuid), { progress_mode: 'rollup' })).status).toBe(200);
    return { O, K, I1, I2 };
  }

  it('repairs rollup ancestors left stale by a crash between the commit and the refresh, every level', async () => {
    const { O, K, I1, I2 } = await hierarchy();
    await checkin(t.admin, { goal_uuid: I2.uuid, value: 20 });
    expect((await goalNow(t.admin, O)).current_progress).toBe(10);
    // The child's new progress is committed; the request "died" before refreshing its ancestors.
    await mutateEntity(
      data(t.tenantUuid),
      goalEntity,
      I1.uuid,
      (s) => ({ ...s.record, current_progress: 80 }) as GoalRecord,
      () => new Error('gone') as never,
    );
    await eventually(async () => {
      expect((await goalNow(t.admin, K)).current_progress).toBe(50);
      expect((await goalNow(t.admin, O)).current_progress).toBe(50);
    });
  });

  it('repairs a parent that lost a child by a crash after a delete, and after a re-parenting', async () => {
    const { O, K, I1, I2 } = await hierarchy();
    await checkin(t.admin, { goal_uuid: I1.uuid, value: 100 });
    expect((await goalNow(t.admin, K)).current_progress).toBe(50);
    // I2 moves to another parent without any refresh: K must now average I1 alone.
    const other = await goal(t.admin, 'key_results', { title: 'K2', time_period_uuid: period.uuid });
    await mutateEntity(
      data(t.tenantUuid),
      goalEntity,
      I2.uuid,
      (s) => ({ ...s.record, parent_links: [{ parent_uuid: other.uuid, contribution_percent: 100 }] }) as GoalRecord,
      () => new Error('gone') as never,
    );
    await eventually(async () => {
      expect((await goalNow(t.admin, K)).current_progress).toBe(100);
      expect((await goalNow(t.admin, O)).current_progress).toBe(100);
    });
  });

  it('sets a goal’s current values from a check-in committed without them (latest check-in wins)', async () => {
    const g = await goal(t.admin, 'key_results', { title: 'direct', time_period_uuid: period.uuid });
    await checkin(t.admin, { goal_uuid: g.uuid, value: 10, checkin_date: '2025-01-01' });
    const now = new Date().toISOString();
    const c: CheckinRecord = {
      uuid: randomUUID(),
      goal_uuid: g.uuid,
      goal_type: 'key_result',
      metric_uuid: null,
      value: 42,
      progress: 42,
      score: null,
      checkin_date: '2025-02-01',
      status: 'on_track',
      note: null,
      creator_uuid: t.adminUuid,
      updated_by_uuid: t.adminUuid,
      source_type: null,
      source_info: {},
      mentioned_entities: {},
      label_uuids: [],
      created_at: now,
      updated_at: now,
    };
    const ctx = data(t.tenantUuid);
    const tx = new WriteTx(ctx).create(checkinEntity, c);
    tx.putSide(checkinOrderItemKey(ctx.tenantId, g.uuid, checkinOrderKey(c)), { id: c.uuid, kind: 'checkin_order' });
    await tx.commit();
    await eventually(async () =>
      expect(await goalNow(t.admin, g)).toMatchObject({
        current_value: 42,
        current_progress: 42,
        current_status: 'on_track',
        last_checkin_date: '2025-02-01',
      }),
    );
  });

  it('applies the same batch twice to the same state: rollups and current values are replay-safe', async () => {
    const { O, K, I1 } = await hierarchy();
    await checkin(t.admin, { goal_uuid: I1.uuid, value: 60 });
    const ctx = data(t.tenantUuid);
    const before = await Promise.all([O, K, I1].map((g) => getEntity(ctx, goalEntity, g.uuid, true)));
    const item = await rawItem(keys.entity(t.tenantUuid, 'goal', I1.uuid));
    const stale = { ...item, rec: { ...item.rec, current_progress: 0 } };
    const { handler } = processorWithQueue();
    const batch = {
      Records: [
        streamRecord('MODIFY', keys.entity(t.tenantUuid, 'goal', I1.uuid), stale, item),
        streamRecord(
          'MODIFY',
          keys.entity(t.tenantUuid, 'goal', K.uuid),
          undefined,
          await rawItem(keys.entity(t.tenantUuid, 'goal', K.uuid)),
        ),
      ],
    };
    for (let round = 0; round < 3; round++) expect((await handler(batch)).batchItemFailures).toEqual([]);
    const after = await Promise.all([O, K, I1].map((g) => getEntity(ctx, goalEntity, g.uuid, true)));
    // Nothing moved: same records, same versions (no write at all on a replay of what is already applied).
    expect(after.map((s) => [s!.version, s!.record.current_progress])).toEqual(before.map((s) => [s!.version, s!.record.current_progress]));
    expect(after.map((s) => s!.record.current_progress)).toEqual([30, 30, 60]);
  });

  it('another tenant’s change touches only that tenant’s goals', async () => {
    const other = await goalTenant();
    const { K, I1 } = await hierarchy();
    await checkin(t.admin, { goal_uuid: I1.uuid, value: 40 });
    const item = await rawItem(keys.entity(t.tenantUuid, 'goal', I1.uuid));
    // The same goal item under the other tenant's key prefix names a goal that tenant does not have.
    const foreign = { ...item, PK: keys.entity(other.t.tenantUuid, 'goal', I1.uuid).PK };
    const { handler } = processorWithQueue();
    expect(
      (await handler({ Records: [streamRecord('MODIFY', keys.entity(other.t.tenantUuid, 'goal', I1.uuid), undefined, foreign)] }))
        .batchItemFailures,
    ).toEqual([]);
    expect((await goalNow(t.admin, K)).current_progress).toBe(20);
    expect(await getEntity(data(other.t.tenantUuid), goalEntity, K.uuid, true)).toBeUndefined();
  });
});

describe('access-request notices from the change stream', () => {
  let t: TenantFixture;
  beforeAll(async () => {
    t = await newTenant();
  });

  async function requested() {
    const owner = await t.user();
    const manager = await t.user();
    const doc = (await owner.api.post('/documents', { title: `Doc ${randomUUID().slice(0, 8)}`, content: 'x' })).body.data.record;
    expect((await owner.api.put(`/documents/${doc.uuid}/grants`, { user_uuid: manager.uuid, level: 'manage' })).status).toBe(200);
    const requester = await t.user();
    const res = await requester.api.post(`/documents/${doc.uuid}/access_requests`, { requested_level: 'edit' });
    expect(res.body.data.outcome).toBe('created');
    const key = accessRequestKey(t.tenantUuid, 'document', doc.uuid, requester.uuid);
    return { owner, manager, requester, doc, request: res.body.data.record, key };
  }

  it('derives each notice and one e-mail message once, however often the committed request is replayed', async () => {
    const { owner, manager, request, key } = await requested();
    const item = await rawItem(key);
    const { handler, sent } = processorWithQueue();
    const created = streamRecord('INSERT', key, undefined, item);
    for (let round = 0; round < 3; round++) expect((await handler({ Records: [created] })).batchItemFailures).toEqual([]);
    for (const who of [owner, manager]) {
      const notes = (await listAll(who.api, '/notifications')).filter((n) => n.subject_uuid === request.uuid);
      expect(notes).toHaveLength(1);
      expect(notes[0]).toMatchObject({ kind: 'access_request.created', recipient_uuid: who.uuid });
    }
    // Every replay hands the worker the same deliveries (the worker skips notices already e-mailed).
    expect(sent).toHaveLength(3);
    const deliveries = sent.map((s) =>
      JSON.stringify([...s.body.deliveries].sort((a: any, b: any) => a.recipient_uuid.localeCompare(b.recipient_uuid))),
    );
    expect(new Set(deliveries).size).toBe(1);
    const notesByRecipient = new Map(
      (await Promise.all([owner, manager].map((w) => listAll(w.api, '/notifications')))).flat().map((n) => [n.recipient_uuid, n.uuid]),
    );
    for (const d of sent[0]!.body.deliveries) expect(d.notification_uuid).toBe(notesByRecipient.get(d.recipient_uuid));
  });

  it('writes the notices when the request committed without them (a crash mid-way), and never for an upgrade', async () => {
    const { owner, request, key } = await requested();
    const item = await rawItem(key);
    // The same event under another notice time: notices the request path never wrote.
    const later = { ...item, notice: { ...item.notice, at: new Date(Date.now() + 1000).toISOString() } };
    const upgrade = { ...item, requested_level: 'manage', notice: undefined };
    const { handler, sent } = processorWithQueue();
    expect(
      (await handler({ Records: [streamRecord('MODIFY', key, item, later), streamRecord('MODIFY', key, later, upgrade)] }))
        .batchItemFailures,
    ).toEqual([]);
    expect((await listAll(owner.api, '/notifications')).filter((n) => n.subject_uuid === request.uuid)).toHaveLength(2);
    expect(sent).toHaveLength(1);
  });

  it('fails the change (to be retried, then dead-lettered) when the queue cannot take the e-mail', async () => {
    const { key } = await requested();
    installLocalQueues({ send: async () => Promise.reject(new Error('queue unavailable')) } as unknown as LocalQueues);
    const handler = streamProcessor({ projections, data: async (tenantId) => data(tenantId), log: logger });
    const record = streamRecord('INSERT', key, undefined, await rawItem(key));
    const unrelated = streamRecord('INSERT', { PK: keys.misc(t.tenantUuid, 'other', 'x').PK, SK: '#' }, undefined, { kind: 'other' });
    // Partial failure: only the failed record is reported (by sequence number), the event source retries from it.
    expect((await handler({ Records: [unrelated, record] })).batchItemFailures).toEqual([
      { itemIdentifier: record.dynamodb!.SequenceNumber },
    ]);
    // A batch that fails whole throws, so the event source bisects it (BisectBatchOnFunctionError).
    await expect(handler({ Records: [record] })).rejects.toThrow(/All records failed/);
  });

  it('e-mails the owner and manager through the local stack’s own stream and worker', async () => {
    const { owner } = await requested();
    await eventually(async () => {
      const [note] = await listAll(owner.api, '/notifications');
      expect(note.email_sent_at).not.toBeNull();
    });
  });
});
