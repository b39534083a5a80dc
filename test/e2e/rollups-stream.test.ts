import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { config } from '#shared/config.ts';
import { createDynamoClient, instrument } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { mutateEntity } from '#shared/command/run.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { logger } from '#shared/logger.ts';
import { streamProcessor } from '#shared/stream/processor.ts';
import { rollupProjection } from '#shared/stream/projections/rollups.ts';
import { eventually } from '../support/eventually.ts';
import { goal, goalTenant, P, type GoalTenant } from './goals.fixture.ts';
import { checkin, goalNow } from './checkins.fixture.ts';
import { streamRecord } from '../support/stream-records.ts';

/**
 * The rollup aggregates and the change stream: a drifted aggregate is repaired, a parent written before
 * aggregates existed gets one, and replayed or reordered changes converge without a write too many.
 */
const data = (tenantId: string): DataCtx => ({ tenantId, db: instrument(createDynamoClient()) });

async function rawItem(key: { PK: string; SK: string }) {
  return (await data('x').db.send(new GetCommand({ TableName: config.tableName, Key: key, ConsistentRead: true }))).Item!;
}

describe('rollup aggregates and the change stream', () => {
  let g: GoalTenant;
  beforeAll(async () => {
    g = await goalTenant();
  });

  /** Objective ← key result ← three initiatives; O and K roll up. */
  async function hierarchy() {
    const base = { time_period_uuid: g.period.uuid };
    const O = await goal(g.t.admin, 'objectives', { ...base, title: 'O' });
    const K = await goal(g.t.admin, 'key_results', { ...base, title: 'K', parents: [O.uuid] });
    const I = await Promise.all([1, 2, 3].map((i) => goal(g.t.admin, 'initiatives', { ...base, title: `I${i}`, parents: [K.uuid] })));
    expect((await g.t.admin.put(P('key_results', K.uuid), { progress_mode: 'rollup' })).status).toBe(200);
    expect((await g.t.admin.put(P('objectives', O.uuid), { progress_mode: 'rollup' })).status).toBe(200);
    return { O, K, I };
  }
  const stored = async (uuid: string) => (await getEntity(data(g.t.tenantUuid), goalEntity, uuid, true))!;

  it('keeps the aggregate on the parent item, exact after check-ins; a drifted aggregate is repaired by the stream and check-ins build on the repaired one', async () => {
    const { O, K, I } = await hierarchy();
    await checkin(g.t.admin, { goal_uuid: I[0]!.uuid, value: 30 });
    await checkin(g.t.admin, { goal_uuid: I[1]!.uuid, value: 60 });
    // K = (30 + 60 + 0) / 3 = 30, in hundredths: sum 10000 x (3000 + 6000), weight 3 x 10000
    expect((await stored(K.uuid)).record).toMatchObject({ rollup: { sum: 90_000_000, weight: 30_000 }, current_progress: 30 });
    expect((await stored(O.uuid)).record).toMatchObject({ rollup: { sum: 30_000_000, weight: 10_000 }, current_progress: 30 });
    // an operator's write (or a bug) leaves K's aggregate wrong: the stream recomputes K from its children
    await mutateEntity(
      data(g.t.tenantUuid),
      goalEntity,
      K.uuid,
      (s) => ({ ...s.record, rollup: { sum: 1, weight: 7 } }) as GoalRecord,
      () => new Error('gone') as never,
    );
    await eventually(async () => expect((await stored(K.uuid)).record.rollup).toEqual({ sum: 90_000_000, weight: 30_000 }));
    await checkin(g.t.admin, { goal_uuid: I[2]!.uuid, value: 90 });
    expect((await goalNow(g.t.admin, K)).current_progress).toBe(60);
    expect((await goalNow(g.t.admin, O)).current_progress).toBe(60);
  });

  it('a parent without an aggregate (written before aggregates existed) is recomputed on the next check-in and keeps one from then on', async () => {
    const { O, K, I } = await hierarchy();
    await checkin(g.t.admin, { goal_uuid: I[0]!.uuid, value: 30 });
    const strip = (uuid: string) =>
      mutateEntity(
        data(g.t.tenantUuid),
        goalEntity,
        uuid,
        (s) => ({ ...s.record, rollup: undefined, rollup_synced_v: undefined }) as GoalRecord,
        () => new Error('gone') as never,
      );
    await strip(K.uuid);
    await strip(O.uuid);
    // whichever comes first, the check-in's own recompute or the stream's, the answer is right at once
    await checkin(g.t.admin, { goal_uuid: I[1]!.uuid, value: 90 });
    expect((await goalNow(g.t.admin, K)).current_progress).toBe(40);
    expect((await goalNow(g.t.admin, O)).current_progress).toBe(40);
    await eventually(async () => expect((await stored(K.uuid)).record.rollup).toEqual({ sum: 120_000_000, weight: 30_000 }));
    await checkin(g.t.admin, { goal_uuid: I[2]!.uuid, value: 30 });
    expect((await goalNow(g.t.admin, O)).current_progress).toBe(50);
  });

  it('skips a change that moved its parents in its own transaction; replayed and reordered unsynced changes converge with no write when nothing drifted', async () => {
    const { O, K, I } = await hierarchy();
    const key = keys.entity(g.t.tenantUuid, 'goal', I[0]!.uuid);
    await checkin(g.t.admin, { goal_uuid: I[0]!.uuid, value: 20 });
    const v1 = await rawItem(key);
    await checkin(g.t.admin, { goal_uuid: I[0]!.uuid, value: 50 });
    const v2 = await rawItem(key);
    // the check-in marked the leaf's item: the projection has nothing to do with it
    expect(v2.rec.rollup_synced_v).toBe(v2.v);
    const handler = streamProcessor({ projections: [rollupProjection], data: async (tenantId) => data(tenantId), log: logger });
    const toChange = (r: DynamoDBRecord) => ({
      eventId: r.eventID!,
      eventName: 'MODIFY' as const,
      at: '',
      tenantId: g.t.tenantUuid,
      keys: key,
      oldImage: v1,
      newImage: v2,
    });
    expect(rollupProjection.accepts(toChange(streamRecord('MODIFY', key, v1, v2)))).toBe(false);
    // The same changes unmarked (as an import or an operator would write them), delivered twice, newest first.
    const unmarked = (item: Record<string, any>) => ({ ...item, rec: { ...item.rec, rollup_synced_v: null } });
    const stale = { ...unmarked(v1), rec: { ...unmarked(v1).rec, current_progress: 0 } };
    const batch = [streamRecord('MODIFY', key, unmarked(v1), unmarked(v2)), streamRecord('MODIFY', key, stale, unmarked(v1))];
    const before = await Promise.all([O, K].map((x) => stored(x.uuid)));
    for (let round = 0; round < 3; round++)
      expect((await handler({ Records: round % 2 ? [...batch].reverse() : batch })).batchItemFailures).toEqual([]);
    const after = await Promise.all([O, K].map((x) => stored(x.uuid)));
    expect(after.map((s) => [s.version, s.record.current_progress, s.record.rollup])).toEqual(
      before.map((s) => [s.version, s.record.current_progress, s.record.rollup]),
    );
    expect(after.map((s) => s.record.current_progress)).toEqual([16.67, 16.67]); // (50 + 0 + 0) / 3
  });
});
