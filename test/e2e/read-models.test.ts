import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { partitionEntries } from '#shared/db/index-queries.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { keys } from '#shared/db/keys.ts';
import { getSides } from '#shared/db/side-items.ts';
import { getTenant } from '#shared/domain/tenants.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { dim, READ_MODELS_VERSION, rmPartition, RM_LIST } from '#shared/read-models/goal-entries.ts';
import { readGoalStats, syncGoals } from '#shared/read-models/goal-sync.ts';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { listAll, newTenant } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';
import { afterStreamPasses } from '../support/stream-marker.ts';
import { goal, goalApi, goalTenant, P, uuids, writeGoals } from './goals.fixture.ts';

const ids = async (ctx: DataCtx, partition: string) => {
  const out: string[] = [];
  for await (const e of partitionEntries(ctx, partition)) out.push(e.id);
  return out.sort();
};

describe('goal read models (change stream)', () => {
  it('follow creates, status and owner changes, archive and delete; a new tenant is ready at once', async () => {
    const { t, period } = await goalTenant();
    const ctx: DataCtx = { tenantId: t.tenantUuid, db: baseDb() };
    // ready from its create on (the marker written by the create itself, at its time), not once the stream gets
    // to it: its lists use the read models from the first request
    expect(await readGoalStats(ctx, 'objective', [])).toMatchObject({ ready: true, version: READ_MODELS_VERSION });
    const [tenant, marker] = await Promise.all([getTenant(ctx), getSides(ctx, [keys.readModelState(t.tenantUuid)], true)]);
    expect([...marker.values()]).toEqual([expect.objectContaining({ ready_at: tenant!.created_at, version: READ_MODELS_VERSION })]);
    const [alice, bob] = await Promise.all([t.user(), t.user()]);
    const tp = period.uuid;
    const g1 = await goal(t.admin, 'objectives', { title: 'one', time_period_uuid: tp, owner_uuids: [alice.uuid] });
    const g2 = await goal(t.admin, 'objectives', {
      title: 'two',
      time_period_uuid: tp,
      owner_uuids: [alice.uuid, bob.uuid],
      visibility: 'limited',
    });
    const stats = (dims: string[]) => readGoalStats(ctx, 'objective', dims);
    const n = async (d: string) => (await stats([d])).count(d);

    await eventually(async () => {
      const s = await stats([
        dim.all,
        dim.status('not_started'),
        dim.period(tp),
        dim.owner(alice.uuid),
        dim.ownerStatus(bob.uuid, 'not_started'),
      ]);
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
      await Promise.all(Array.from({ length: 5 }, () => syncGoals(ctx, [g.uuid])));
      const s = await readGoalStats(ctx, 'objective', dims);
      expect(s.count(dim.all).n).toBe(1);
      for (const x of statuses) {
        expect(s.count(dim.status(x)).n, `${round} ${x}`).toBe(x === status ? 1 : 0);
        expect(s.count(dim.ownerStatus(alice.uuid, x)).n).toBe(x === status ? 1 : 0);
      }
      expect(s.count(dim.status('not_started')).n).toBe(0);
    }
    expect(await syncGoals(ctx, [g.uuid])).toBe(0); // nothing left to do
    // the backfill over a tenant the stream already keeps: idempotent, nothing to write
    await eventually(async () =>
      expect(await runAdmin(['rebuild-read-models', '--tenant', t.tenantUuid])).toMatchObject({ goals: 1, written: 0 }),
    );
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

describe('lists served by the read models', () => {
  it('the whole list in last-check-in order: every goal listed at once, the order as the stream keeps it (both directions, same-date ties in creation order and never-checked-in goals last both ways), a deleted goal left out at once, a limited one hidden', async () => {
    const { t, period } = await goalTenant();
    const ctx: DataCtx = { tenantId: t.tenantUuid, db: baseDb() };
    const order = rmPartition(t.tenantUuid, 'objective', RM_LIST.checkin, '0');
    const g: Array<{ uuid: string }> = [];
    for (let i = 0; i < 6; i++) {
      g.push(await goal(t.admin, 'objectives', { title: `o${i}`, time_period_uuid: period.uuid }));
      // the create wrote the goal's place in the order itself: there before the stream gets to the goal
      expect(await ids(ctx, order)).toContain(g[i]!.uuid);
    }
    const checkIn = async (i: number, checkin_date: string) =>
      expect((await t.admin.post('/rest/v2/checkins', { goal_uuid: g[i]!.uuid, value: 1, checkin_date })).status).toBe(201);
    await checkIn(1, '2025-01-10');
    await checkIn(3, '2025-01-05');
    await checkIn(4, '2025-01-10');
    const list = (order: string, api = t.admin) =>
      listAll(api, `${P('objectives')}?q[s]=last_checkin_date%20${order}`, 4).then((rs) => rs.map((r: { uuid: string }) => r.uuid));
    const all = uuids(g).sort();
    // Every goal is listed at every moment, whether the tenant's readiness is seen yet (the goals sorted in memory)
    // or not (the order's read model, each goal placed by its create); where a check-in puts it follows the stream.
    // An answer short of goals was seen in clean-clone runs while the stream lagged: the stream marked the new
    // tenant ready before it had synced its goals, which were in the order only once synced.
    const asc = [3, 1, 4, 0, 2, 5].map((i) => g[i]!.uuid); // dated first, earliest first; then never checked in, in creation order
    const desc = [1, 4, 3, 0, 2, 5].map((i) => g[i]!.uuid); // latest first, the same ties in creation order; never checked in still last
    // (one page each: pages read one after the other may see a goal move between them, as any offset paging)
    const onePage = async (dir: string) =>
      uuids((await t.admin.get(`${P('objectives')}?q[s]=last_checkin_date%20${dir}`)).body.data.records);
    const short: string[][] = []; // never retried: an answer short of a goal fails the test
    await eventually(async () => {
      for (const answer of [await onePage('asc'), await onePage('desc')])
        if (JSON.stringify([...answer].sort()) !== JSON.stringify(all)) short.push(answer);
      expect([await list('asc'), await list('desc')]).toEqual([asc, desc]);
    });
    expect(short).toEqual([]);
    // the order's read model synced too (not just the goals sorted in memory), and its create-written entries as the stream would write them
    expect((await readGoalStats(ctx, 'objective', [])).ready).toBe(true); // a new tenant is ready from its create on
    await eventually(async () => {
      const entries: string[] = [];
      for await (const e of partitionEntries(ctx, order)) entries.push(e.id);
      expect(entries).toEqual(asc);
      const latestFirst: string[] = [];
      for await (const e of partitionEntries(ctx, rmPartition(t.tenantUuid, 'objective', RM_LIST.checkinDesc, '0'))) latestFirst.push(e.id);
      expect(latestFirst).toEqual(desc);
    });
    // every goal's create synced by now too (g0, g2, g5 have nothing else the waits above would show): nothing left to write
    await afterStreamPasses();
    for (const x of g) expect(await syncGoals(ctx, [x.uuid])).toBe(0);
    // a goal deleted a moment ago is checked on its item: left out before the stream syncs the order
    await goalApi(t.admin).remove('objectives', g[0]!.uuid);
    expect(await list('asc')).toEqual(asc.filter((id) => id !== g[0]!.uuid));
    // a limited goal the member may not see is never listed
    const member = await t.user();
    await goalApi(t.admin).update('objectives', g[5]!.uuid, { visibility: 'limited' });
    await eventually(async () => expect(await list('desc', member.api)).toEqual([1, 4, 3, 2].map((i) => g[i]!.uuid)));
  });

  it('says which parts of a list answer a read model decided (x-read-model), and nothing on an answer read exactly', async () => {
    const { t, period } = await goalTenant();
    const made: string[] = [];
    for (let i = 0; i < 13; i++) made.push((await goal(t.admin, 'objectives', { title: `g${i}`, time_period_uuid: period.uuid })).uuid);
    await goalApi(t.admin).update('objectives', made[4]!, { current_status: 'at_risk' });
    const get = (qs: string) => t.admin.get(`${P('objectives')}?${qs}`);
    const atRisk = 'q[current_status_eq]=at_risk';
    // a small count, and an association's own list (written with the goals), are read exactly and say nothing
    for (const qs of ['count=true', `q[time_period_uuid_eq]=${period.uuid}&count=true`])
      expect((await get(qs)).headers.get('x-read-model'), qs).toBeNull();
    // every goal listed; where a check-in puts it follows the stream
    expect((await get('q[s]=last_checkin_date%20desc')).headers.get('x-read-model')).toBe('order');
    // once the stream has counted them, the one goal at risk is found through the status read model (12 goals fewer
    // than the whole list), and the answer says so
    await eventually(async () => {
      const res = await get(atRisk);
      expect(res.headers.get('x-read-model')).toBe('filter');
      expect(uuids(res.body.data.records)).toEqual([made[4]]);
    });
  });

  it('every new goal is in the last-check-in order from its create on, while the stream lags (6 tenants at once, a read after each create)', async () => {
    const short: string[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async (_, round) => {
        const { t, period } = await goalTenant();
        const made: string[] = [];
        for (let i = 0; i < 6; i++) {
          made.push((await goal(t.admin, 'objectives', { title: `o${i}`, time_period_uuid: period.uuid })).uuid);
          for (const dir of ['asc', 'desc']) {
            const res = await t.admin.get(`${P('objectives')}?q[s]=last_checkin_date%20${dir}`);
            const listed = new Set(uuids(res.body.data.records));
            if (made.some((id) => !listed.has(id)))
              short.push(`tenant ${round}, after create ${i}, ${dir}: ${listed.size} of ${made.length}`);
          }
        }
      }),
    );
    expect(short).toEqual([]);
  });

  it('a deep page of the creation order starts at its page anchor once the anchors are settled, and is right for admins and members', async () => {
    const { t, period } = await goalTenant();
    const data: DataCtx = { tenantId: t.tenantUuid, db: baseDb() };
    const made = await goal(t.admin, 'objectives', { title: 'template', time_period_uuid: period.uuid });
    const template = (await getEntity(data, goalEntity, made.uuid))!.record;
    // 340 goals created long ago (settled buckets), ten per tenth of a second; one limited, early
    const start = Date.parse('2025-01-01T00:00:00.000Z');
    const old: GoalRecord[] = Array.from({ length: 340 }, (_, i) => {
      const at = new Date(start + i * 10).toISOString();
      return {
        ...template,
        uuid: randomUUID(),
        title: `old ${i}`,
        created_at: at,
        updated_at: at,
        path: null,
        visibility: i === 7 ? 'limited' : 'public',
      };
    });
    for (const g of old) g.path = g.uuid;
    await writeGoals(data, old);
    const all = [...old.map((g) => g.uuid), made.uuid]; // the template was created now: last
    await eventually(async () => expect((await readGoalStats(data, 'objective', [dim.all])).count(dim.all).n).toBe(all.length));
    const page = (api: typeof t.admin, n: number) => api.get(`${P('objectives')}?page=${n}&per_page=20`);
    for (const n of [11, 13, 17, 18]) {
      const res = await page(t.admin, n);
      expect(uuids(res.body.data.records), `page ${n}`).toEqual(all.slice((n - 1) * 20, n * 20));
      expect(res.body.data.pagy.next).toBe(n < 18 ? n + 1 : null);
      expect(Number(res.headers.get('x-db-items-read'))).toBeLessThan((n - 1) * 20); // fewer than the keys it skips
    }
    // another order is sorted in memory over every goal: never placed by the anchors
    const titles = new Map([...old.map((g) => [g.uuid, g.title] as const), [made.uuid, 'template']]);
    const byTitle = [...all].sort((a, b) => titles.get(a)!.localeCompare(titles.get(b)!));
    expect(uuids((await t.admin.get(`${P('objectives')}?page=13&per_page=20&q[s]=title%20asc`)).body.data.records)).toEqual(
      byTitle.slice(240, 260),
    );
    const member = await t.user();
    const seen = all.filter((id) => id !== old[7]!.uuid);
    expect(uuids((await page(member.api, 13)).body.data.records)).toEqual(seen.slice(240, 260)); // a limited goal before it: keys walked
    // a delete before the page is counted once the stream has synced it
    await goalApi(t.admin).remove('objectives', old[100]!.uuid);
    const left = all.filter((id) => id !== old[100]!.uuid);
    await eventually(async () => expect(uuids((await page(t.admin, 13)).body.data.records)).toEqual(left.slice(240, 260)));

    // goals created a moment ago are in unsettled buckets: a deep page walks their keys and is right at once
    const fresh: GoalRecord[] = Array.from({ length: 230 }, (_, i) => {
      const at = new Date(Date.now() - 5_000 + i).toISOString();
      const uuid = randomUUID();
      return { ...template, uuid, path: uuid, type: 'key_result', title: `fresh ${i}`, created_at: at, updated_at: at };
    });
    await writeGoals(data, fresh);
    expect(uuids((await t.admin.get(`${P('key_results')}?page=11&per_page=20`)).body.data.records)).toEqual(
      fresh.slice(200, 220).map((g) => g.uuid),
    );
  });
});
