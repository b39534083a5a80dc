import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { config } from '#shared/config.ts';
import { createDynamoClient, instrument } from '#shared/db/client.ts';
import { mutateEntity } from '#shared/command/run.ts';
import { keys } from '#shared/db/keys.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { pathFor } from '#shared/domain/goals/rules.ts';
import { logger } from '#shared/logger.ts';
import { streamProcessor } from '#shared/stream/processor.ts';
import { goalPathsProjection } from '#shared/stream/projections/goal-paths.ts';
import { listAll } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';
import { streamRecord } from '../support/stream-records.ts';
import { goal, goalTenant, P, sorted, uuids, type GoalTenant, type KindPath } from './goals.fixture.ts';

/**
 * `path` (the first-parent uuid chain) is derived state the change stream keeps (goal-paths projection): a
 * re-parenting or a wrong path written without the request's rewrite of the subtree (a function that died
 * after the goal's commit, an operator's write) is carried down the subtree level by level.
 */
const data = (tenantId: string): DataCtx => ({ tenantId, db: instrument(createDynamoClient()) });

describe('goal paths and the change stream', () => {
  let g: GoalTenant;
  beforeAll(async () => {
    g = await goalTenant();
  });
  const mk = (kind: KindPath, title: string, parents: string[] = []) =>
    goal(g.t.admin, kind, { title, time_period_uuid: g.period.uuid, parents });
  const stored = async (uuid: string) => (await getEntity(data(g.t.tenantUuid), goalEntity, uuid, true))!;
  const paths = async (ids: string[]) => Promise.all(ids.map(async (id) => (await stored(id)).record.path));
  /** A goal's write as the request path's transaction makes it, with nothing after the commit. */
  const write = (uuid: string, change: (r: GoalRecord) => GoalRecord) =>
    mutateEntity(
      data(g.t.tenantUuid),
      goalEntity,
      uuid,
      (s) => change(s.record),
      () => new Error('gone') as never,
    );

  /** root1 → top → { a → b → c, a2 }; side's first parent is root2, its second b (not on top's line). */
  async function subtree(tag: string) {
    const root1 = await mk('objectives', `${tag} root1`);
    const root2 = await mk('objectives', `${tag} root2`);
    const top = await mk('objectives', `${tag} top`, [root1.uuid]);
    const a = await mk('key_results', `${tag} a`, [top.uuid]);
    const a2 = await mk('key_results', `${tag} a2`, [top.uuid]);
    const b = await mk('initiatives', `${tag} b`, [a.uuid]);
    const c = await mk('initiatives', `${tag} c`, [b.uuid]);
    const side = await mk('initiatives', `${tag} side`, [root2.uuid, b.uuid]);
    expect(c.path).toBe(`${root1.uuid}/${top.uuid}/${a.uuid}/${b.uuid}/${c.uuid}`);
    return { root1, root2, top, a, a2, b, c, side };
  }

  it('a re-parenting committed without its subtree rewrite (the function died after the commit): the stream brings every descendant path right', async () => {
    const { root2, top, a, a2, b, c, side } = await subtree('moved');
    const root2Record = (await stored(root2.uuid)).record;
    // what updateGoal commits for { parents: [root2] }: the new first parent and the goal's own path, nothing below
    await write(top.uuid, (r) => ({
      ...r,
      parent_links: [{ parent_uuid: root2.uuid, contribution_percent: 100 }],
      path: pathFor(r.uuid, root2Record),
    }));
    const line = `${root2.uuid}/${top.uuid}`;
    const expected = [`${line}/${a.uuid}`, `${line}/${a2.uuid}`, `${line}/${a.uuid}/${b.uuid}`, `${line}/${a.uuid}/${b.uuid}/${c.uuid}`];
    await eventually(async () => expect(await paths([a.uuid, a2.uuid, b.uuid, c.uuid])).toEqual(expected));
    expect(await paths([top.uuid, side.uuid])).toEqual([line, `${root2.uuid}/${side.uuid}`]);
    await eventually(async () =>
      expect(sorted(uuids(await listAll(g.t.admin, `${P('initiatives')}?q[path_start]=${line}`)))).toEqual(sorted([b.uuid, c.uuid])),
    );
  });

  it('a wrong path written into the middle of a line (an operator, a bug): the goal itself and everything below it are set right', async () => {
    const { root1, top, a, b, c } = await subtree('corrupt');
    const right = await paths([a.uuid, b.uuid, c.uuid]);
    await write(a.uuid, (r) => ({ ...r, path: `${root1.uuid}/${a.uuid}` }));
    await eventually(async () => expect(await paths([a.uuid, b.uuid, c.uuid])).toEqual(right));
    expect(right[0]).toBe(`${root1.uuid}/${top.uuid}/${a.uuid}`);
  });

  it('a replayed or older change writes nothing once the paths are right', async () => {
    const { root2, top, a, b, c } = await subtree('replay');
    const key = keys.entity(g.t.tenantUuid, 'goal', top.uuid);
    const raw = async () =>
      (await data('x').db.send(new GetCommand({ TableName: config.tableName, Key: key, ConsistentRead: true }))).Item!;
    const v1 = await raw();
    const root2Record = (await stored(root2.uuid)).record;
    await write(top.uuid, (r) => ({
      ...r,
      parent_links: [{ parent_uuid: root2.uuid, contribution_percent: 100 }],
      path: pathFor(r.uuid, root2Record),
    }));
    const v2 = await raw();
    await eventually(async () =>
      expect((await stored(c.uuid)).record.path).toBe(`${root2.uuid}/${top.uuid}/${a.uuid}/${b.uuid}/${c.uuid}`),
    );
    const before = await Promise.all([top, a, b, c].map((x) => stored(x.uuid)));
    const handler = streamProcessor({ projections: [goalPathsProjection], data: async (tenantId) => data(tenantId), log: logger });
    const batch = [streamRecord('MODIFY', key, v1, v2), streamRecord('MODIFY', key, v2, v1)];
    for (let round = 0; round < 2; round++)
      expect((await handler({ Records: round ? [...batch].reverse() : batch })).batchItemFailures).toEqual([]);
    const after = await Promise.all([top, a, b, c].map((x) => stored(x.uuid)));
    expect(after.map((s) => [s.version, s.record.path])).toEqual(before.map((s) => [s.version, s.record.path]));
  });
});
