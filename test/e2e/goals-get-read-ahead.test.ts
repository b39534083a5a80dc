import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, newTenant, type TenantFixture } from '../support/api.ts';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config.ts';
import { baseDb } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { getEntity } from '#shared/db/reads.ts';
import { goalEntity } from '#shared/domain/goals/entity.ts';
import { goal, goalTenant, P, type GoalTenant } from './goals.fixture.ts';
import { eventually } from '../support/eventually.ts';

const rawGoal = async (tenant: string, uuid: string) =>
  (await baseDb().send(new GetCommand({ TableName: config.tableName, Key: keys.entity(tenant, 'goal', uuid), ConsistentRead: true })))
    .Item!;

/**
 * Issue 9: GET of a goal reads the goal in the same BatchGetItem as the caller's user (and queries the
 * caller's teams alongside), and the goal keeps its labels' names, so it costs one round trip in sequence; every
 * rule of the caller still holds (an inactive user is 401, a hidden goal 403, another tenant's goal 404).
 */
describe('GET goal: the goal is read ahead with the caller', () => {
  let g: GoalTenant;
  let other: TenantFixture;
  const rt = (res: { headers: Headers }) => Number(res.headers.get('x-db-round-trips'));

  beforeAll(async () => {
    [g, other] = await Promise.all([goalTenant(), newTenant()]);
  });

  it('one round trip for a goal without labels, as admin and as an owner', async () => {
    const owner = await g.t.user();
    const o = await goal(g.t.admin, 'objectives', {
      title: 'Plain',
      time_period_uuid: g.period.uuid,
      owner_uuids: [owner.uuid],
      visibility: 'limited',
    });
    for (const api of [g.t.admin, owner.api]) {
      const res = await api.get(`${P('objectives')}/${o.uuid}`);
      expect(res.status).toBe(200);
      expect(res.body.data.record.uuid).toBe(o.uuid);
      expect(rt(res)).toBe(1);
    }
  });

  it("an admin this container has seen costs one call (an admin's teams are not read ahead); once demoted, team access still holds", async () => {
    const x = await g.t.user();
    const calls = (res: { headers: Headers }) => Number(res.headers.get('x-db-calls'));
    const team = (await g.t.admin.post('/rest/v2/teams', { name: `Team of ${x.uuid}`, member_uuids: [x.uuid] })).body.data.record;
    const onTeam = await goal(g.t.admin, 'objectives', {
      title: 'Team only',
      time_period_uuid: g.period.uuid,
      team_uuids: [team.uuid],
      visibility: 'limited',
    });
    expect((await g.t.admin.put(`/rest/v2/users/${x.uuid}`, { user: { role: 'admin' } })).status).toBe(200);
    await x.api.get(`${P('objectives')}/${onTeam.uuid}`); // the container learns the role
    const asAdmin = await x.api.get(`${P('objectives')}/${onTeam.uuid}`);
    expect([asAdmin.status, asAdmin.body.data.access_source, calls(asAdmin), rt(asAdmin)]).toEqual([200, 'admin', 1, 1]);
    expect((await g.t.admin.put(`/rest/v2/users/${x.uuid}`, { user: { role: 'member' } })).status).toBe(200);
    // the remembered role is stale: the answer is the member's, at a member's cost (a writer's access to a goal
    // naming teams reads those teams by key, strongly, whatever the caller's team list says: goals/access.ts)
    const stale = await x.api.get(`${P('objectives')}/${onTeam.uuid}`);
    expect([stale.status, stale.body.data.access_source, rt(stale)]).toEqual([200, 'team', 2]);
    // a member's read, its role now known to the container: user and goal at once, with the caller's teams read
    // ahead in the same round trip (a member's teams judge the goal's parents shown, when it has any), then the
    // goal's teams by key
    const member = await x.api.get(`${P('objectives')}/${onTeam.uuid}`);
    expect([member.status, member.body.data.access_source, rt(member), calls(member)]).toEqual([200, 'team', 2, 3]);
  });

  it('one round trip for a goal with labels too: the goal keeps their names (1 read unit)', async () => {
    const o = await goal(g.t.admin, 'objectives', { title: 'Labelled', time_period_uuid: g.period.uuid, labels: ['ahead', 'Second'] });
    const res = await g.t.admin.get(`${P('objectives')}/${o.uuid}`);
    expect(res.body.data.record.labels.map((l: { name: string }) => l.name)).toEqual(['ahead', 'Second']);
    expect(rt(res)).toBe(1);
    expect(Number(res.headers.get('x-db-read-units'))).toBeLessThanOrEqual(2);
  });

  it('a goal written before names were kept still names its labels, and the change stream names it', async () => {
    const o = await goal(g.t.admin, 'objectives', { title: 'Old style', time_period_uuid: g.period.uuid, labels: ['older'] });
    const ctx = { tenantId: g.t.tenantUuid, db: baseDb() };
    const old = { ...(await getEntity(ctx, goalEntity, o.uuid, true))!.record };
    delete old.labels;
    // the goal item as written before `labels` was kept (as an operator's write would: version unchanged)
    await ctx.db.send(new PutCommand({ TableName: config.tableName, Item: { ...(await rawGoal(g.t.tenantUuid, o.uuid)), rec: old } }));
    const res = await g.t.admin.get(`${P('objectives')}/${o.uuid}`);
    expect(res.body.data.record.labels).toEqual(o.labels); // read after the goal (2 round trips), unless the stream was faster
    expect(rt(res)).toBeLessThanOrEqual(2);
    await eventually(async () => expect((await getEntity(ctx, goalEntity, o.uuid, true))!.record.labels).toEqual(o.labels));
    expect(rt(await g.t.admin.get(`${P('objectives')}/${o.uuid}`))).toBe(1);
  });

  it('keeps the rules: inactive user 401, hidden goal 403, other kind and other tenant 404', async () => {
    const member = await g.t.user();
    const hidden = await goal(g.t.admin, 'objectives', { title: 'Hidden', time_period_uuid: g.period.uuid, visibility: 'limited' });
    const open = await goal(g.t.admin, 'objectives', { title: 'Open', time_period_uuid: g.period.uuid });
    expect((await member.api.get(`${P('objectives')}/${open.uuid}`)).status).toBe(200);
    expectError(await member.api.get(`${P('objectives')}/${hidden.uuid}`), 403, 'forbidden');
    expectError(await g.t.admin.get(`${P('key_results')}/${open.uuid}`), 404, 'not_found');
    expectError(await other.admin.get(`${P('objectives')}/${open.uuid}`), 404, 'not_found');
    expectError(await g.t.admin.get(`${P('objectives')}/not-a-uuid`), 404, 'not_found');
    expect((await g.t.admin.put(`/rest/v2/users/${member.uuid}`, { user: { status: 'inactive' } })).status).toBe(200);
    expectError(await member.api.get(`${P('objectives')}/${open.uuid}`), 401, 'unauthorized');
  });
});
