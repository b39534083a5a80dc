import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { getEntity } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { goalEntity } from '#shared/domain/goals/entity.ts';
import { createGoal } from '#shared/domain/goals/create.ts';
import { updateGoal } from '#shared/domain/goals/update.ts';
import { GOAL_LIMITS } from '#shared/domain/goals/rules.ts';
import { expectError, type TenantFixture } from '../support/api.ts';
import { countingCtx, createPeriod, goal, goalTenant, type GoalTenant, goalApi } from './goals.fixture.ts';

/** Worst-case transaction items of a goal create and update within GOAL_LIMITS (the formulas in shared/domain/goals/rules.ts). */
const GOAL_WRITE_ITEMS = {
  create: (l: typeof GOAL_LIMITS = GOAL_LIMITS) => 5 + l.owners + l.delegates + 2 * l.teams + 3 * l.labels + 3 * l.parents,
  update: (l: typeof GOAL_LIMITS = GOAL_LIMITS) => 7 + 2 * l.owners + 2 * l.delegates + 3 * l.teams + 4 * l.labels + 5 * l.parents,
};

/**
 * GOAL_LIMITS (shared/domain/goals/rules.ts) are the documented per-field caps of a goal body. A write within all
 * of them at once must fit one DynamoDB transaction (100 items): these tests build the worst case of a create
 * and of an update, over HTTP and counted at the DynamoDB client.
 */
describe('goals: per-field limits always fit one transaction', () => {
  let g: GoalTenant;
  let t: TenantFixture;
  let q2: GoalTenant['period'];
  let users: string[];
  let teams: string[];
  let parents: string[];
  let n = 0;
  /** Label names nobody used yet: each one is a label the write creates. */
  const freshLabels = () => Array.from({ length: GOAL_LIMITS.labels }, () => `limit label ${n++}`);
  const { owners: O, delegates: D, teams: T, parents: PA, visibleEntities: V } = GOAL_LIMITS;
  const set = (list: string[], which: 0 | 1, size: number) => list.slice(which * size, which * size + size);

  /** Every field at its cap, with set `which` (0 or 1) of owners, delegates, teams and parents. */
  const createBody = (which: 0 | 1) => ({
    title: `worst case ${which}`,
    time_period_uuid: g.period.uuid,
    owner_uuids: set(users, which, O),
    delegate_uuids: set(users.slice(2 * O), which, D),
    team_uuids: set(teams, which, T),
    labels: freshLabels(),
    parents: set(parents, which, PA),
    visible_entities: [
      ...users.slice(0, V - T).map((u) => ({ entity_type: 'user' as const, entity_uuid: u, mode: 'edit' as const })),
      ...set(teams, 0, T).map((tm) => ({ entity_type: 'team' as const, entity_uuid: tm })),
    ],
  });
  /** Every association replaced by set 1, a new period, a new short_id, a visibility change. */
  const updateBody = (shortId: string) => ({
    owner_uuids: set(users, 1, O),
    delegate_uuids: set(users.slice(2 * O), 1, D),
    team_uuids: set(teams, 1, T),
    labels: freshLabels(),
    parents: set(parents, 1, PA),
    time_period_uuid: q2.uuid,
    short_id: shortId,
    visibility: 'limited' as const,
  });

  beforeAll(async () => {
    g = await goalTenant();
    t = g.t;
    q2 = await createPeriod(t.admin, 'Q2', '2025-04-01', '2025-06-30');
    const mkUser = async (i: number) => {
      const res = await t.admin.post('/rest/v2/users', { user: { email: `limit-${i}-${randomUUID().slice(0, 6)}@example.test` } });
      if (res.status !== 201) throw new Error(`user create failed: ${res.status}`);
      return res.body.data.record.uuid as string;
    };
    users = [];
    for (let i = 0; i < V; i += 25)
      users.push(...(await Promise.all(Array.from({ length: Math.min(25, V - i) }, (_, j) => mkUser(i + j)))));
    teams = await Promise.all(
      Array.from(
        { length: 2 * T },
        async (_, i) => (await t.admin.post('/rest/v2/teams', { name: `limit team ${i}` })).body.data.record.uuid as string,
      ),
    );
    parents = [];
    for (let i = 0; i < 2 * PA; i++)
      parents.push((await goal(t.admin, 'objectives', { title: `limit parent ${i}`, time_period_uuid: g.period.uuid })).uuid);
  });

  it('the worst cases computed next to GOAL_LIMITS stay within 100 items', () => {
    expect(GOAL_WRITE_ITEMS.create()).toBe(64);
    expect(GOAL_WRITE_ITEMS.update()).toBe(100); // 99 + the hierarchy guard (docs/data-model.md)
    expect(GOAL_WRITE_ITEMS.create()).toBeLessThanOrEqual(100);
    expect(GOAL_WRITE_ITEMS.update()).toBeLessThanOrEqual(100);
  });

  it('a create and an update with every field at its cap succeed over HTTP (201, 200)', async () => {
    const res = await goalApi(t.admin).create('key_results', createBody(0));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const created = res.body.data.record;
    expect(created.owner_uuids).toHaveLength(O);
    expect(created.labels).toHaveLength(GOAL_LIMITS.labels);
    expect(created.parent_links).toHaveLength(PA);
    expect(created.visible_entities).toHaveLength(V);
    expect((await goalApi(t.admin).update('key_results', created.uuid, { short_id: 'LIMIT-HTTP-0' })).status).toBe(200);

    const upd = await goalApi(t.admin).update('key_results', created.uuid, updateBody('LIMIT-HTTP-1'));
    expect(upd.status, JSON.stringify(upd.body)).toBe(200);
    expect(upd.body.data.record).toMatchObject({
      owner_uuids: set(users, 1, O),
      team_uuids: set(teams, 1, T),
      time_period_uuid: q2.uuid,
      short_id: 'LIMIT-HTTP-1',
      visibility: 'limited',
    });
    expect(upd.body.data.record.parent_links.map((l: any) => l.parent_uuid)).toEqual(set(parents, 1, PA));
  });

  it('the worst-case transactions hold exactly the computed number of items', async () => {
    const c = await countingCtx(t, t.adminUuid);
    const view = await createGoal(c.ctx, 'key_result', createBody(0));
    expect(Math.max(...c.txItems)).toBe(GOAL_WRITE_ITEMS.create());
    await updateGoal((await countingCtx(t, t.adminUuid)).ctx, 'key_result', view.goal.uuid, { short_id: 'LIMIT-DOMAIN-0' });
    const u = await countingCtx(t, t.adminUuid);
    await updateGoal(u.ctx, 'key_result', view.goal.uuid, updateBody('LIMIT-DOMAIN-1'));
    expect(Math.max(...u.txItems)).toBe(GOAL_WRITE_ITEMS.update());
  });

  it('one more than a cap is 422 on that field', async () => {
    const over = expectError(
      await goalApi(t.admin).create('objectives', {
        title: 'too many owners',
        time_period_uuid: g.period.uuid,
        owner_uuids: users.slice(0, O + 1),
      }),
      422,
      'validation_failed',
    );
    expect(over.details[0]!.field).toBe('owner_uuids');
    const labels = expectError(
      await goalApi(t.admin).create('objectives', {
        title: 'too many labels',
        time_period_uuid: g.period.uuid,
        labels: Array.from({ length: GOAL_LIMITS.labels + 1 }, (_, i) => `l${i}`),
      }),
      422,
      'validation_failed',
    );
    expect(labels.details[0]!.field).toBe('labels');
  });

  it('too_many stays as a last resort, naming a field: a goal stored with more associations than the caps', async () => {
    // as written before the caps were lowered: 96 owner and delegate entries (+ the period's) on one goal
    const base = await goal(t.admin, 'objectives', { title: 'legacy', time_period_uuid: g.period.uuid });
    const data = { tenantId: t.tenantUuid, db: baseDb() };
    const stored = (await getEntity(data, goalEntity, base.uuid))!;
    const legacy = {
      ...stored.record,
      uuid: randomUUID(),
      title: 'legacy wide',
      owner_uuids: Array.from({ length: 50 }, () => randomUUID()),
      delegate_uuids: Array.from({ length: 46 }, () => randomUUID()),
    };
    await new WriteTx(data).create(goalEntity, legacy).commit();

    // re-enveloping every entry, moving the period and taking a short_id: 101 items
    const e = expectError(
      await goalApi(t.admin).update('objectives', legacy.uuid, { visibility: 'limited', time_period_uuid: q2.uuid, short_id: 'LEGACY-1' }),
      422,
      'validation_failed',
    );
    expect(e.details[0]).toMatchObject({ field: 'visibility', code: 'too_many' });
    expect((await goalApi(t.admin).get('objectives', legacy.uuid)).body.data.record).toMatchObject({
      visibility: 'public',
      short_id: null,
      time_period_uuid: g.period.uuid,
    });
    // a smaller change of the same goal goes through
    expect((await goalApi(t.admin).update('objectives', legacy.uuid, { visibility: 'limited' })).status).toBe(200);
  });
});
