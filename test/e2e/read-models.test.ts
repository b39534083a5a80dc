import { describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { partitionEntries, type DataCtx } from '#shared/db/store.ts';
import { dim, rmPartition, RM_LIST } from '#shared/stream/read-models/goal-entries.ts';
import { readGoalStats, syncGoalReadModels } from '#shared/stream/read-models/goal-sync.ts';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { newTenant } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';
import { goal, goalApi, goalTenant, P } from './goals.fixture.ts';

const ids = async (ctx: DataCtx, partition: string) => {
  const out: string[] = [];
  for await (const e of partitionEntries(ctx, partition)) out.push(e.id);
  return out.sort();
};

describe('goal read models (change stream)', () => {
  it('follow creates, status and owner changes, archive and delete; a new tenant is ready at once', async () => {
    const { t, period } = await goalTenant();
    const ctx: DataCtx = { tenantId: t.tenantUuid, db: baseDb() };
    const [alice, bob] = await Promise.all([t.user(), t.user()]);
    const tp = period.uuid;
    const g1 = await goal(t.admin, 'objectives', { title: 'one', time_period_uuid: tp, owner_uuids: [alice.uuid] });
    const g2 = await goal(t.admin, 'objectives', { title: 'two', time_period_uuid: tp, owner_uuids: [alice.uuid, bob.uuid], visibility: 'limited' });
    const stats = (dims: string[]) => readGoalStats(ctx, 'objective', dims);
    const n = async (d: string) => (await stats([d])).count(d);

    await eventually(async () => {
      const s = await stats([dim.all, dim.status('not_started'), dim.period(tp), dim.owner(alice.uuid), dim.ownerStatus(bob.uuid, 'not_started')]);
      expect(s.ready).toBe(true);
      expect(s.count(dim.all)).toEqual({ n: 2, nl: 1 });
      expect(s.count(dim.status('not_started'))).toEqual({ n: 2, nl: 1 });
      expect(s.count(dim.period(tp)).n).toBe(2);
      expect(s.count(dim.owner(alice.uuid)).n).toBe(2);
      expect(s.count(dim.ownerStatus(bob.uuid, 'not_started'))).toEqual({ n: 1, nl: 1 });
    });

    await goalApi(t.admin).update('objectives', g1.uuid, { current_status: 'behind', owner_uuids: [bob.uuid] });
    await eventually(async () => {
      expect((await n(dim.status('behind'))).n).toBe(1);
      expect((await n(dim.status('not_started'))).n).toBe(1);
      expect((await n(dim.owner(alice.uuid))).n).toBe(1);
      expect((await n(dim.ownerStatus(bob.uuid, 'behind'))).n).toBe(1);
      expect(await ids(ctx, rmPartition(t.tenantUuid, 'objective', RM_LIST.periodStatus, `${tp}#behind`))).toEqual([g1.uuid]);
      expect(await ids(ctx, rmPartition(t.tenantUuid, 'objective', RM_LIST.ownerStatus, `${bob.uuid}#behind`))).toEqual([g1.uuid]);
      expect(await ids(ctx, rmPartition(t.tenantUuid, 'objective', RM_LIST.ownerStatus, `${alice.uuid}#behind`))).toEqual([]);
    });

    // archived goals stay listed and counted; deleted (discarded) ones leave every read model
    await goalApi(t.admin).archive('objectives', g2.uuid);
    await goalApi(t.admin).remove('objectives', g1.uuid);
    await eventually(async () => {
      expect(await n(dim.all)).toEqual({ n: 1, nl: 1 });
      expect((await n(dim.status('behind'))).n).toBe(0);
      expect((await n(dim.ownerStatus(bob.uuid, 'behind'))).n).toBe(0);
      expect(await ids(ctx, rmPartition(t.tenantUuid, 'objective', RM_LIST.periodStatus, `${tp}#not_started`))).toEqual([g2.uuid]);
      expect(await ids(ctx, rmPartition(t.tenantUuid, 'objective', RM_LIST.periodStatus, `${tp}#behind`))).toEqual([]);
    });

    // another tenant sees none of it
    const other = await newTenant();
    const otherStats = await readGoalStats({ tenantId: other.tenantUuid, db: baseDb() }, 'objective', [dim.all, dim.owner(alice.uuid)]);
    expect(otherStats.count(dim.all).n + otherStats.count(dim.owner(alice.uuid)).n).toBe(0);
    expect((await other.admin.get(`${P('objectives')}/${g2.uuid}`)).status).toBe(404);
  });

  it('replays and concurrent syncs never count twice (20 rounds)', async () => {
    const { t, period } = await goalTenant();
    const ctx: DataCtx = { tenantId: t.tenantUuid, db: baseDb() };
    const alice = await t.user();
    const g = await goal(t.admin, 'objectives', { title: 'raced', time_period_uuid: period.uuid, owner_uuids: [alice.uuid] });
    const statuses = ['on_track', 'behind', 'at_risk', 'in_progress'] as const;
    const dims = [dim.all, ...statuses.map(dim.status), ...statuses.map((s) => dim.ownerStatus(alice.uuid, s)), dim.status('not_started')];
    for (let round = 0; round < 20; round++) {
      const status = statuses[round % statuses.length]!;
      await goalApi(t.admin).update('objectives', g.uuid, { current_status: status });
      // the stream's own sync races these five
      await Promise.all(Array.from({ length: 5 }, () => syncGoalReadModels(ctx, g.uuid)));
      const s = await readGoalStats(ctx, 'objective', dims);
      expect(s.count(dim.all).n).toBe(1);
      for (const x of statuses) {
        expect(s.count(dim.status(x)).n, `${round} ${x}`).toBe(x === status ? 1 : 0);
        expect(s.count(dim.ownerStatus(alice.uuid, x)).n).toBe(x === status ? 1 : 0);
      }
      expect(s.count(dim.status('not_started')).n).toBe(0);
    }
    expect(await syncGoalReadModels(ctx, g.uuid)).toBe(0); // nothing left to do
    // the backfill over a tenant the stream already keeps: idempotent, nothing to write
    await eventually(async () => expect(await runAdmin(['rebuild-read-models', '--tenant', t.tenantUuid])).toMatchObject({ goals: 1, written: 0 }));
  });

  it('a status filter and count answer the same from the read models as from the list (read-your-writes on a small list)', async () => {
    const { t, period } = await goalTenant();
    const made = [];
    for (let i = 0; i < 6; i++) made.push(await goal(t.admin, 'objectives', { title: `g${i}`, time_period_uuid: period.uuid }));
    await goalApi(t.admin).update('objectives', made[2]!.uuid, { current_status: 'at_risk' });
    // at once, without waiting for the stream: a small list is planned exactly
    const res = await t.admin.get(`${P('objectives')}?q[current_status_eq]=at_risk&count=true`);
    expect(res.body.data.records.map((r: { uuid: string }) => r.uuid)).toEqual([made[2]!.uuid]);
    expect(res.body.data.pagy.count).toBe(1);
  });
});
