import { beforeAll, describe, expect, it } from 'vitest';
import { listGoals } from '#shared/domain/goals/list.ts';
import { presentOne } from '#shared/presenters/goals.ts';
import { createGoal } from '#shared/domain/goals/create.ts';
import { updateGoal } from '#shared/domain/goals/update.ts';
import type { TenantFixture } from '../support/api.ts';
import { countingCtx, goal, goalTenant, type GoalTenant, goalApi } from './goals.fixture.ts';

/** What goal writes and claim lookups read, counted at the DynamoDB client (the 10,000-goal part: test/scale/goals-data-access.test.ts). */
describe('goals: what writes and claim lookups read', () => {
  let g: GoalTenant;
  let t: TenantFixture;
  const mk = (title: string, parents: string[] = []) => goal(t.admin, 'objectives', { title, time_period_uuid: g.period.uuid, parents });
  beforeAll(async () => {
    g = await goalTenant();
    t = g.t;
  });

  it('create and update name the labels they created without reading them back', async () => {
    const created = await countingCtx(t, t.adminUuid);
    const view = await createGoal(created.ctx, 'objective', {
      title: 'Fresh labels',
      time_period_uuid: g.period.uuid,
      labels: ['Fresh one', 'Fresh two'],
    });
    const record = await presentOne(created.ctx, view.goal);
    expect(record.labels.map((l) => l.name)).toEqual(['Fresh one', 'Fresh two']);
    // a label batch read right after the write may miss it (BatchGetItem is eventually consistent), and is not needed
    expect(created.kinds.label ?? 0).toBe(0);

    const updated = await countingCtx(t, t.adminUuid);
    const after = await updateGoal(updated.ctx, 'objective', view.goal.uuid, { labels: ['fresh ONE', 'Fresh three'] });
    expect((await presentOne(updated.ctx, after.goal)).labels.map((l) => l.name)).toEqual(['Fresh one', 'Fresh three']);
    expect(updated.kinds.label ?? 0).toBe(0); // the existing label is named by its claim, read in the update's batch

    // a goal written before names were kept: presented by reading its labels (a deleted one left out)
    const old = { ...after.goal };
    delete old.labels;
    const presenting = await countingCtx(t, t.adminUuid);
    expect((await presentOne(presenting.ctx, { ...old, label_uuids: [...old.label_uuids, 'no-such-label'] })).labels).toEqual(
      after.goal.labels,
    );
    expect(presenting.kinds.label).toBe(2);
  });

  it('a new parent is checked for cycles up its own line, not by walking the goal’s whole subtree', async () => {
    const top = await mk('top');
    const big = await mk('big', [top.uuid]);
    for (let i = 0; i < 40; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => mk(`below ${i + j}`, [big.uuid])));
    const other = await mk('other parent');
    const { ctx, counts, kinds } = await countingCtx(t, t.adminUuid);
    const view = await updateGoal(ctx, 'objective', big.uuid, { parents: [top.uuid, other.uuid] });
    expect(view.goal.parent_links.map((l) => l.parent_uuid)).toEqual([top.uuid, other.uuid]);
    expect(counts.queries, 'index queries').toBe(0);
    expect(kinds.goal).toBe(4); // the goal, the new parent (it has no line above it), and each parent's rollup check
  });

  it('short_id and label name filters look their claims up in one batch, whatever the number of values', async () => {
    const labelled = await goal(t.admin, 'objectives', {
      title: 'claims',
      time_period_uuid: g.period.uuid,
      labels: ['claim a', 'claim b'],
    });
    expect((await goalApi(t.admin).update('objectives', labelled.uuid, { short_id: 'CLAIM-1' })).status).toBe(200);
    for (const [filter, values] of [
      ['q[labels_name_in]', 'claim a,CLAIM B,claim c,claim d'],
      ['q[short_id_in]', 'claim-1,claim-2,claim-3'],
    ] as const) {
      const { ctx, calls } = await countingCtx(t, t.adminUuid);
      const result = await listGoals(ctx, 'objective', [[filter, values]]);
      expect(
        result.records.map((r) => r.uuid),
        filter,
      ).toEqual([labelled.uuid]);
      expect(calls.GetCommand ?? 0, filter).toBe(0);
      expect(calls.BatchGetCommand, filter).toBe(2); // the claims, then the page's goals
    }
  });

  it('refuses a cycle even while the child index has not caught up with the links', async () => {
    const a = await mk('a');
    const b = await mk('b', [a.uuid]);
    const c = await mk('c', [b.uuid]);
    const lagging = () => countingCtx(t, t.adminUuid, { hideIndex: (pk) => pk.includes('@child_of#') });
    for (const [below, parent] of [
      [a, c],
      [b, c],
      [a, b],
    ] as const) {
      const { ctx } = await lagging();
      await expect(updateGoal(ctx, 'objective', below.uuid, { parents: [parent.uuid] })).rejects.toMatchObject({
        status: 422,
        details: [expect.objectContaining({ field: 'parents', code: 'cycle' })],
      });
    }
    expect((await goalApi(t.admin).get('objectives', a.uuid)).body.data.record.parent_links).toEqual([]);
  });
});
