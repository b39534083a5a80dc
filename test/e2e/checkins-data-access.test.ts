import { beforeAll, describe, expect, it } from 'vitest';
import { createCheckin, deleteCheckin, updateCheckin } from '#shared/domain/checkins/service.ts';
import type { TenantFixture } from '../support/api.ts';
import { countingCtx, goal, goalTenant, type GoalTenant } from './goals.fixture.ts';
import { goalNow } from './checkins.fixture.ts';

/**
 * What a check-in write reads (docs/data-model.md, access patterns): the goal once (strongly consistent,
 * inside its optimistic loop), the check-in once for an update or delete, the ordering item, then one
 * read per rollup ancestor recomputed.
 */
describe('check-ins: what writes read', () => {
  let g: GoalTenant;
  let t: TenantFixture;
  beforeAll(async () => {
    g = await goalTenant();
    t = g.t;
  });

  it('create, update and delete read the goal item once and the check-in once', async () => {
    const kr = await goal(t.admin, 'key_results', { title: 'Counted', time_period_uuid: g.period.uuid, metric: { target_value: 10 } });

    const c = await countingCtx(t, t.adminUuid);
    const created = await createCheckin(c.ctx, { goal_uuid: kr.uuid, value: 5, status: 'on_track' });
    expect(created.goal.current_progress).toBe(50);
    expect(c.kinds).toEqual({ goal: 1 });

    const u = await countingCtx(t, t.adminUuid);
    const updated = await updateCheckin(u.ctx, created.checkin.uuid, { value: 8 });
    expect(updated.goal.current_value).toBe(8);
    expect(u.kinds).toEqual({ checkin: 1, goal: 1 });

    const d = await countingCtx(t, t.adminUuid);
    await deleteCheckin(d.ctx, created.checkin.uuid);
    expect(d.kinds).toEqual({ checkin: 1, goal: 1 });
    expect((await goalNow(t.admin, kr)).current_value).toBeNull();
  });

  it('a check-in that moves a goal reads each parent once for its rollup, not the goal again', async () => {
    const parent = await goal(t.admin, 'objectives', { title: 'Rollup parent', time_period_uuid: g.period.uuid });
    expect((await t.admin.put(`/rest/v2/objectives/${parent.uuid}`, { progress_mode: 'rollup' })).status).toBe(200);
    const child = await goal(t.admin, 'key_results', { title: 'Child', time_period_uuid: g.period.uuid, parents: [parent.uuid] });
    const { ctx, kinds } = await countingCtx(t, t.adminUuid);
    await createCheckin(ctx, { goal_uuid: child.uuid, value: 40 });
    expect((await goalNow(t.admin, parent)).current_progress).toBe(40);
    // the child in its write; the parent for the recompute (the child just written is not read again)
    expect(kinds).toEqual({ goal: 2 });
  });

  it('a member without edit rights is refused before a score rule is looked at (403, nothing written)', async () => {
    const stranger = await t.user();
    const kr = await goal(t.admin, 'key_results', { title: 'Not theirs', time_period_uuid: g.period.uuid });
    const res = await stranger.api.post('/rest/v2/checkins', { goal_uuid: kr.uuid, status: 'on_track', score: 1 });
    expect(res.status).toBe(403);
    expect((await goalNow(t.admin, kr)).last_checkin_date).toBeNull();
  });
});
