import { beforeAll, describe, expect, it } from 'vitest';
import { createCheckin, deleteCheckin, updateCheckin } from '#shared/domain/checkins/service.ts';
import { collectSignals } from '#shared/signals.ts';
import type { TenantFixture } from '../support/api.ts';
import { countingCtx, goal, goalTenant, type GoalTenant } from './goals.fixture.ts';

/**
 * The RollupDepth metric's source (docs/architecture.md, "Metrics"): a check-in write reports the rollup
 * ancestors it moved in its own transaction through the domain's signal port (shared/signals.ts); the
 * check-in handlers emit it.
 */
describe('check-ins: the rollup depth signal', () => {
  let g: GoalTenant;
  let t: TenantFixture;
  beforeAll(async () => {
    g = await goalTenant();
    t = g.t;
  });

  it('a check-in under two rollup goals reports 2 on create, update and delete; one without parents reports 0', async () => {
    const top = await goal(t.admin, 'objectives', { title: 'Top', time_period_uuid: g.period.uuid });
    expect((await t.admin.put(`/rest/v2/objectives/${top.uuid}`, { progress_mode: 'rollup' })).status).toBe(200);
    const mid = await goal(t.admin, 'objectives', { title: 'Mid', time_period_uuid: g.period.uuid, parents: [top.uuid] });
    expect((await t.admin.put(`/rest/v2/objectives/${mid.uuid}`, { progress_mode: 'rollup' })).status).toBe(200);
    const kr = await goal(t.admin, 'key_results', {
      title: 'Leaf',
      time_period_uuid: g.period.uuid,
      parents: [mid.uuid],
      metric: { target_value: 10 },
    });

    const { ctx } = await countingCtx(t, t.adminUuid);
    const created = await collectSignals(() => createCheckin(ctx, { goal_uuid: kr.uuid, value: 5 }));
    expect(created.signals).toEqual({ rollupDepth: 2 });
    expect((await collectSignals(() => updateCheckin(ctx, created.value.checkin.uuid, { value: 7 }))).signals).toEqual({ rollupDepth: 2 });
    expect((await collectSignals(() => deleteCheckin(ctx, created.value.checkin.uuid))).signals).toEqual({ rollupDepth: 2 });

    const alone = await goal(t.admin, 'key_results', { title: 'Alone', time_period_uuid: g.period.uuid, metric: { target_value: 10 } });
    expect((await collectSignals(() => createCheckin(ctx, { goal_uuid: alone.uuid, value: 1 }))).signals).toEqual({ rollupDepth: 0 });
  });
});
