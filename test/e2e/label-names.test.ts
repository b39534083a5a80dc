import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { config } from '#shared/config.ts';
import { createDynamoClient, instrument } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { mutateEntity } from '#shared/command/run.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { checkinEntity } from '#shared/domain/checkins/entity.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { logger } from '#shared/logger.ts';
import { streamProcessor } from '#shared/stream/processor.ts';
import { projections } from '#shared/stream/projections.ts';
import { backfillLabelNames } from '#shared/stream/label-names-backfill.ts';
import { listAll, newTenant, type TenantFixture } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';
import { afterStreamPasses } from '../support/stream-marker.ts';
import { streamRecord } from '../support/stream-records.ts';
import { checkin, checkinApi } from './checkins.fixture.ts';
import { goal, goalApi, goalTenant, KINDS, P, type GoalTenant } from './goals.fixture.ts';

/**
 * Label names kept on goals and check-ins (docs/architecture.md, "Derived state"): the writer sees the names it
 * wrote at once; a label's rename or delete reaches every goal and check-in naming it through the change stream
 * (label-names projection), eventually; replaying the stream changes nothing.
 */
const L = '/rest/v2/labels';
const data = (tenantId: string): DataCtx => ({ tenantId, db: instrument(createDynamoClient()) });
const raw = async (key: { PK: string; SK: string }) =>
  (await data('x').db.send(new GetCommand({ TableName: config.tableName, Key: key, ConsistentRead: true }))).Item!;
const names = (r: { labels: Array<{ name: string }> }) => r.labels.map((l) => l.name);

describe('label names on goals and check-ins', () => {
  let g: GoalTenant;
  let t: TenantFixture;
  beforeAll(async () => {
    g = await goalTenant();
    t = g.t;
  });

  async function labelled(theme: string) {
    const goals = await Promise.all(
      KINDS.map((k) => goal(t.admin, k, { title: `${k} ${theme}`, time_period_uuid: g.period.uuid, labels: ['Other', theme] })),
    );
    const c = await checkin(t.admin, { goal_uuid: goals[1]!.uuid, value: 1, labels: [theme] });
    const label = goals[0]!.labels.find((l) => l.name === theme)!;
    return { goals, c, label };
  }
  const goalNames = async (gl: { uuid: string; type: string }) =>
    names((await goalApi(t.admin).get(`${gl.type}s` as (typeof KINDS)[number], gl.uuid)).body!.data.record);
  const checkinNames = async (uuid: string) => names((await checkinApi(t.admin).get(uuid)).body!.data.record);

  it('a rename shows on every goal and check-in naming the label (eventually), a delete drops it; other labels and updated_at untouched', async () => {
    const { goals, c, label } = await labelled('Theme');
    const updatedAt = await Promise.all(
      goals.map(async (gl) => (await goalApi(t.admin).get(`${gl.type}s` as (typeof KINDS)[number], gl.uuid)).body!.data.record.updated_at),
    );
    expect((await t.admin.put(`${L}/${label.uuid}`, { name: 'Theme renamed' })).status).toBe(200);
    await eventually(async () => {
      for (const gl of goals) expect(await goalNames(gl)).toEqual(['Other', 'Theme renamed']);
      expect(await checkinNames(c.uuid)).toEqual(['Theme renamed']);
      // list pages present the names the goals keep
      const page = await listAll(t.admin, `${P('objectives')}?q[uuid_eq]=${goals[0]!.uuid}`);
      expect(names(page[0])).toEqual(['Other', 'Theme renamed']);
    });
    const after = await Promise.all(
      goals.map(async (gl) => (await goalApi(t.admin).get(`${gl.type}s` as (typeof KINDS)[number], gl.uuid)).body!.data.record.updated_at),
    );
    expect(after).toEqual(updatedAt); // a label's rename is no change of the goal

    expect((await t.admin.delete(`${L}/${label.uuid}`)).status).toBe(200);
    await eventually(async () => {
      for (const gl of goals) expect(await goalNames(gl)).toEqual(['Other']);
      expect(await checkinNames(c.uuid)).toEqual([]);
    });
  });

  it('a goal written after a rename names the label as renamed at once (the name claim spells it), any spelling', async () => {
    const { label } = await labelled('Spelling');
    expect((await t.admin.put(`${L}/${label.uuid}`, { name: 'SPELLING' })).status).toBe(200); // same claim, new spelling
    const res = await t.admin.post(P('key_results'), { title: 'after', time_period_uuid: g.period.uuid, labels: ['spelling'] });
    expect(res.body.data.record.labels).toEqual([{ uuid: label.uuid, name: 'SPELLING' }]);
    expect(res.headers.get('x-db-round-trips')).toBe('2');
    const ci = await checkin(t.admin, { goal_uuid: res.body.data.record.uuid, labels: ['Spelling'] });
    expect(ci.labels).toEqual([{ uuid: label.uuid, name: 'SPELLING' }]);
  });

  it('repairs a goal written with a name gone stale (a rename between its read and its commit)', async () => {
    const { goals, label } = await labelled('Racy');
    const ctx = data(t.tenantUuid);
    // what a create that read the label's name before a rename, and committed after the rename's fan-out, leaves
    await mutateEntity(
      ctx,
      goalEntity,
      goals[2]!.uuid,
      (s) =>
        ({ ...s.record, labels: s.record.labels!.map((l) => (l.uuid === label.uuid ? { ...l, name: 'Racy (stale)' } : l)) }) as GoalRecord,
      () => new Error('gone') as never,
    );
    await eventually(async () => expect(await goalNames(goals[2]!)).toEqual(['Other', 'Racy']));
  });

  it('replaying the label change and the goal changes changes nothing (same records, same versions)', async () => {
    const { goals, c, label } = await labelled('Replayed');
    expect((await t.admin.put(`${L}/${label.uuid}`, { name: 'Replayed 2' })).status).toBe(200);
    await eventually(async () => expect(await checkinNames(c.uuid)).toEqual(['Replayed 2']));
    await eventually(async () => {
      for (const gl of goals) expect(await goalNames(gl)).toEqual(['Other', 'Replayed 2']);
    });
    const ctx = data(t.tenantUuid);
    const versions = async () =>
      Promise.all([...goals.map((gl) => getEntity(ctx, goalEntity, gl.uuid, true)), getEntity(ctx, checkinEntity, c.uuid, true)]);
    const before = await versions();
    const labelKey = keys.entity(t.tenantUuid, 'label', label.uuid);
    const labelItem = await raw(labelKey);
    const oldLabel = { ...labelItem, v: (labelItem.v as number) - 1, rec: { ...labelItem.rec, name: 'Replayed' } };
    const goalKey = keys.entity(t.tenantUuid, 'goal', goals[0]!.uuid);
    const goalItem = await raw(goalKey);
    const staleGoal = { ...goalItem, rec: { ...goalItem.rec, labels: [{ uuid: label.uuid, name: 'Replayed' }] } };
    const handler = streamProcessor({ projections, data: async (tenantId) => data(tenantId), log: logger });
    const batch = {
      Records: [
        streamRecord('MODIFY', labelKey, oldLabel, labelItem),
        streamRecord('MODIFY', goalKey, staleGoal, goalItem),
        streamRecord('INSERT', goalKey, undefined, goalItem),
      ],
    };
    for (let round = 0; round < 3; round++) expect((await handler(batch)).batchItemFailures).toEqual([]);
    const after = await versions();
    expect(after.map((s) => [s!.version, s!.record.labels])).toEqual(before.map((s) => [s!.version, s!.record.labels]));
  });

  it('another tenant’s label of the same name is another label: its rename changes nothing here', async () => {
    const other = await newTenant();
    const mine = await goal(t.admin, 'objectives', { title: 'mine', time_period_uuid: g.period.uuid, labels: ['Shared name'] });
    const theirs = (await other.admin.post(L, { name: 'Shared name' })).body.data.record;
    expect(theirs.uuid).not.toBe(mine.labels[0]!.uuid);
    expect((await other.admin.put(`${L}/${theirs.uuid}`, { name: 'Theirs now' })).status).toBe(200);
    // a later change of this tenant's label is synced after the other tenant's; by then the other one's would have shown
    const probe = await labelled('Probe');
    expect((await t.admin.put(`${L}/${probe.label.uuid}`, { name: 'Probe 2' })).status).toBe(200);
    await eventually(async () => expect(await checkinNames(probe.c.uuid)).toEqual(['Probe 2']));
    // the stream applies changes of different items side by side: the other tenant's rename is applied by now
    await afterStreamPasses();
    expect(await goalNames(mine)).toEqual(['Shared name']);
  });

  it('the backfill names goals and check-ins written before, and writes each label name claim with the name; run again it writes nothing', async () => {
    const f = await goalTenant();
    const o = await goal(f.t.admin, 'objectives', { title: 'legacy', time_period_uuid: f.period.uuid, labels: ['Legacy'] });
    const c = await checkin(f.t.admin, { goal_uuid: o.uuid, labels: ['Legacy'] });
    const label = o.labels[0]!;
    const ctx = data(f.t.tenantUuid);
    // as written before names were kept: no names on the goal and check-in, no name on the claim
    const claimKey = keys.unique(f.t.tenantUuid, 'label_name', 'legacy');
    const { data: _name, ...claim } = await raw(claimKey);
    const put = (Item: Record<string, unknown>) => ctx.db.send(new PutCommand({ TableName: config.tableName, Item }));
    await put(claim);
    // (nor label entries of check-ins: they had none)
    await ctx.db.send(
      new DeleteCommand({ TableName: config.tableName, Key: keys.entry(f.t.tenantUuid, 'checkin', c.uuid, 'label', label.uuid) }),
    );
    for (const key of [keys.entity(f.t.tenantUuid, 'goal', o.uuid), keys.entity(f.t.tenantUuid, 'checkin', c.uuid)]) {
      const item = await raw(key);
      const { labels: _labels, ...rec } = item.rec as Record<string, unknown>;
      await put({ ...item, rec });
    }
    // a command naming the label reads it (its claim spells no name): one round trip more
    const before = await f.t.admin.post(P('initiatives'), { title: 'before', time_period_uuid: f.period.uuid, labels: ['LEGACY'] });
    expect(before.body.data.record.labels).toEqual([label]);
    expect(before.headers.get('x-db-round-trips')).toBe('3');

    const first = await backfillLabelNames(ctx);
    expect(first).toMatchObject({ labels: 1, claims: 1, goals: 2, checkins: 1 });
    expect((await raw(claimKey)).data).toEqual({ name: 'Legacy' });
    expect((await getEntity(ctx, goalEntity, o.uuid, true))!.record.labels).toEqual([label]);
    expect((await getEntity(ctx, checkinEntity, c.uuid, true))!.record.labels).toEqual([label]);
    expect(await backfillLabelNames(ctx)).toEqual({ labels: 1, claims: 0, goals: 2, checkins: 1, named: 0 });

    const after = await f.t.admin.post(P('initiatives'), { title: 'after', time_period_uuid: f.period.uuid, labels: ['legacy'] });
    expect(after.body.data.record.labels).toEqual([label]);
    expect(after.headers.get('x-db-round-trips')).toBe('2');
    // the check-in named by the backfill got its label entry with its names: a rename reaches it
    expect(await raw(keys.entry(f.t.tenantUuid, 'checkin', c.uuid, 'label', label.uuid))).toBeDefined();
    expect((await f.t.admin.put(`${L}/${label.uuid}`, { name: 'Legacy 2' })).status).toBe(200);
    await eventually(async () => expect(names((await checkinApi(f.t.admin).get(c.uuid)).body!.data.record)).toEqual(['Legacy 2']));
  });
});
