import { beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { keptEntries } from '#shared/db/references.ts';
import { getSide } from '#shared/db/side-items.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { backfillChildRefs, childLinks } from '#shared/domain/goals/child-refs.ts';
import { childrenOfGoal, goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { refreshRollups } from '#shared/domain/goals/rollup-writes.ts';
import { updateGoal } from '#shared/domain/goals/update.ts';
import { newTenant, type TenantFixture } from '../support/api.ts';
import { countingCtx, createPeriod, goal, goalApi } from './goals.fixture.ts';

/**
 * A goal's children are kept in its own partition (shared/domain/goals/child-refs.ts), so a rollup recomputed in
 * full counts a child linked a moment ago whatever the child index (GSI1) shows; goals stored before (their
 * `child_of` entries in their own partition, on the index only) are still counted, moved by their next write
 * or by the backfill.
 */
describe('goals: child links kept in the parent, strongly read', () => {
  let t: TenantFixture;
  let period: string;
  let data: DataCtx;
  const metric = { metric_type: 'reach' as const, start_value: 0, target_value: 10 };
  const lagging = () => countingCtx(t, t.adminUuid, { hideIndex: (pk) => pk.includes('@child_of#') });

  beforeAll(async () => {
    t = await newTenant();
    period = (await createPeriod(t.admin, 'Q1', '2025-01-01', '2025-03-31')).uuid;
    data = { tenantId: t.tenantUuid, db: baseDb() };
  });

  const checkIn = async (goalUuid: string, value: number) =>
    expect((await t.admin.post('/rest/v2/checkins', { goal_uuid: goalUuid, value })).status).toBe(201);

  it('a goal switched to rollup counts a child the child index does not show yet', async () => {
    const parent = await goal(t.admin, 'objectives', { title: 'manual parent', time_period_uuid: period });
    const child = await goal(t.admin, 'key_results', { title: 'kr', time_period_uuid: period, metric, parents: [parent.uuid] });
    await checkIn(child.uuid, 4);
    const { ctx } = await lagging();
    await updateGoal(ctx, 'objective', parent.uuid, { progress_mode: 'rollup' });
    expect((await goalApi(t.admin).get('objectives', parent.uuid)).body.data.record.current_progress).toBe(40);
  });

  it('a refresh counts the children kept in the parent, and no child whose link is gone', async () => {
    const parent = await goal(t.admin, 'objectives', { title: 'rollup parent', time_period_uuid: period });
    expect((await goalApi(t.admin).update('objectives', parent.uuid, { progress_mode: 'rollup' })).status).toBe(200);
    const [a, b] = await Promise.all(
      ['a', 'b'].map((title) => goal(t.admin, 'key_results', { title, time_period_uuid: period, metric, parents: [parent.uuid] })),
    );
    await checkIn(a!.uuid, 2);
    await checkIn(b!.uuid, 6);
    expect((await keptEntries(data, 'goal', parent.uuid, childrenOfGoal)).map((e) => e.id).sort()).toEqual([a!.uuid, b!.uuid].sort());
    const { ctx } = await lagging();
    const latest = await refreshRollups(ctx, [parent.uuid]);
    expect(latest.get(parent.uuid)?.current_progress).toBe(40);

    expect((await goalApi(t.admin).update('key_results', b!.uuid, { parents: [] })).status).toBe(200);
    expect((await keptEntries(data, 'goal', parent.uuid, childrenOfGoal)).map((e) => e.id)).toEqual([a!.uuid]);
    expect((await goalApi(t.admin).get('objectives', parent.uuid)).body.data.record.current_progress).toBe(20);
  });

  it('a tenant stored before: its children on the index are counted, moved by a write and by the backfill, then the index is not read', async () => {
    // a tenant of its own: this process has seen the others marked (a mark is never removed but here)
    t = await newTenant();
    period = (await createPeriod(t.admin, 'Q1', '2025-01-01', '2025-03-31')).uuid;
    data = { tenantId: t.tenantUuid, db: baseDb() };
    const parent = await goal(t.admin, 'objectives', { title: 'old parent', time_period_uuid: period });
    const kids = await Promise.all(
      ['old 1', 'old 2', 'old 3'].map((title) => goal(t.admin, 'key_results', { title, time_period_uuid: period, metric })),
    );
    // Linked as the code before wrote links (the child_of entry in the child's own partition), and the tenant not marked moved.
    const legacy = { ...goalEntity, layout: undefined };
    for (const [i, k] of kids.entries()) {
      const stored = (await getEntity(data, goalEntity, k.uuid, true))!;
      const { child_refs: _, ...old } = stored.record;
      const linked: GoalRecord = {
        ...old,
        parent_links: [{ parent_uuid: parent.uuid, contribution_percent: 100 }],
        current_progress: [10, 50, 30][i]!,
      };
      await new WriteTx(data).replace(legacy, stored, linked).commit();
    }
    await new WriteTx(data).deleteSide(keys.childRefsState(t.tenantUuid)).commit();
    const [k1, k2, k3] = kids.map((k) => k.uuid) as [string, string, string];
    const legacyEntry = (child: string) => getSide(data, keys.entry(t.tenantUuid, 'goal', child, 'goal@child_of', parent.uuid));
    expect(await legacyEntry(k1)).toBeDefined();
    expect(await keptEntries(data, 'goal', parent.uuid, childrenOfGoal)).toEqual([]);

    // still counted (from the index) while not moved
    expect((await childLinks(data, parent.uuid)).map((e) => e.id).sort()).toEqual([k1, k2, k3].sort());
    expect((await goalApi(t.admin).update('objectives', parent.uuid, { progress_mode: 'rollup' })).body.data.record.current_progress).toBe(
      30,
    );

    // a write moves a goal's entries (the stream's own writes of these goals may move them first); an unlink of
    // a goal not moved removes its old entry
    expect((await goalApi(t.admin).update('key_results', k1, { title: 'old 1 renamed' })).status).toBe(200);
    expect(await legacyEntry(k1)).toBeUndefined();
    expect((await keptEntries(data, 'goal', parent.uuid, childrenOfGoal)).map((e) => e.id)).toContain(k1);
    expect((await goalApi(t.admin).update('key_results', k2, { parents: [] })).status).toBe(200);
    expect(await legacyEntry(k2)).toBeUndefined();
    expect((await keptEntries(data, 'goal', parent.uuid, childrenOfGoal)).map((e) => e.id)).not.toContain(k2);
    expect((await goalApi(t.admin).get('objectives', parent.uuid)).body.data.record.current_progress).toBe(20); // (10 + 30) / 2

    expect((await backfillChildRefs(data)).goals).toBeGreaterThanOrEqual(4);
    for (const k of [k1, k2, k3]) expect(await legacyEntry(k)).toBeUndefined();
    expect(await getSide(data, keys.childRefsState(t.tenantUuid))).toBeDefined();
    expect(await backfillChildRefs(data)).toMatchObject({ moved: 0 });
    expect((await keptEntries(data, 'goal', parent.uuid, childrenOfGoal)).map((e) => e.id).sort()).toEqual([k1, k3].sort());

    // marked: the list is the parent's own partition only, the index is not queried
    await childLinks(data, parent.uuid); // this container learns the mark
    const { ctx, calls } = await lagging();
    expect((await childLinks(ctx, parent.uuid)).map((e) => e.id).sort()).toEqual([k1, k3].sort());
    expect(calls).toEqual({ QueryCommand: 1 });
  });
});
