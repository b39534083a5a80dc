import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { checkinListName, checkinOrderItemKey } from '#shared/domain/checkins/entity.ts';
import { PATH_BY_KIND } from '#shared/domain/goals/entity.ts';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { seedPlanOverApi, seedStraight, type Refs, type SeedSize } from '../../scripts/lib/bench-full-seed.ts';
import { Api } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';

/**
 * The full bench's straight seed (scripts/lib/bench-full-seed.ts) must write exactly what the API writes. One
 * plan is seeded twice: straight into the table, and over HTTP into a second tenant. Then the two tenants'
 * answers and stored items are compared with each uuid replaced by its place in the plan and every timestamp
 * blanked (the two seeds ran at different times).
 */
const SIZE: SeedSize = { goals: 24, checkins: 40, users: 4, teams: 2, labels: 3 };
const STREAM_LAG_MS = 150_000;
const ADMIN_EMAIL = 'bench-admin@example.test';

interface Side {
  tenantId: string;
  adminUuid: string;
  refs: Refs;
  api: Api;
}

/** JSON with the side's uuids named by their place in the plan, other uuids (metrics) and timestamps blanked. */
function normalizer(side: Side) {
  const names = new Map<string, string>([
    [side.tenantId, 'tenant'],
    [side.adminUuid, 'admin'],
  ]);
  for (const [kind, ids] of Object.entries(side.refs))
    if (kind !== 'labelNames' && kind !== 'goalKinds') (ids as string[]).forEach((id, i) => names.set(id, `${kind}${i}`));
  return (value: unknown) =>
    JSON.parse(
      JSON.stringify(value)
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => `<${names.get(id) ?? 'uuid'}>`)
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
        // a goal's page-anchor bucket is its creation time to the tenth of a second
        .replace(/created:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d/g, 'created:<bucket>')
        // the check-in list shard follows the goal uuid's last digit (checkinListName), random on each side
        .replace(/#checkin#\d+"/g, '#checkin#<shard>"')
        // so do the read models' sharded lists (shardOf the goal uuid)
        .replace(/(@rm_status#[a-z_]+#)\d+/g, '$1<shard>')
        .replace(/@rm_checkin#\d+/g, '@rm_checkin#<shard>'),
    );
}

/** Every item of a base-table partition, as stored. */
async function partition(pk: string) {
  const out = await baseDb().send(
    new QueryCommand({
      TableName: inject('tableName'),
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []).map(({ ...item }) => {
    delete item.expires_at;
    return item;
  });
}

describe('bench full seed: straight into the table = over the API', () => {
  it('writes the items the API writes, with the same answers', { timeout: 400_000 }, async () => {
    // the same tenant name and admin e-mail on both sides (claims are per tenant)
    const straight = await seedStraight({
      endpoint: inject('dynamoEndpoint'),
      tableName: inject('tableName'),
      size: SIZE,
      tenantName: 'Bench twin',
      adminEmail: ADMIN_EMAIL,
      chunk: 7,
    });
    const { token } = (await runAdmin(['issue-token', '--tenant', straight.tenantId, '--user', straight.adminUuid])) as { token: string };
    const t = (await runAdmin(['create-tenant', '--name', 'Bench twin', '--admin-email', ADMIN_EMAIL])) as {
      tenant_uuid: string;
      user_uuid: string;
      token: string;
    };
    const viaApi = await seedPlanOverApi(inject('apiUrl'), t.token, SIZE);
    const sides: [Side, Side] = [
      { ...straight, api: new Api(token) },
      { tenantId: t.tenant_uuid, adminUuid: t.user_uuid, refs: viaApi, api: new Api(t.token) },
    ];
    const norm = sides.map(normalizer) as [(v: unknown) => unknown, (v: unknown) => unknown];
    expect(straight.refs.goals).toHaveLength(SIZE.goals);
    expect(straight.refs.checkins).toHaveLength(SIZE.checkins);

    /** The same request on both sides (paths naming plan uuids by index), the normalized answers. */
    const both = async (path: (s: Side) => string) =>
      Promise.all(
        sides.map(async (s, i) => {
          const res = await s.api.get(path(s));
          expect(res.status, `${path(s)} ${JSON.stringify(res.body)}`).toBe(200);
          return norm[i]!(res.body.data);
        }),
      );
    // Records of a list in uuid order: the straight seed creates many records within one millisecond, and lists
    // order records of the same creation time by uuid (random), so only the set is the same on both sides.
    const byUuid = (data: any) =>
      Array.isArray(data?.records)
        ? { ...data, records: [...data.records].sort((x, y) => String(x.uuid).localeCompare(String(y.uuid))) }
        : data;
    const same = async (path: (s: Side) => string) => {
      const [a, b] = await both(path);
      expect(byUuid(a), path(sides[0])).toEqual(byUuid(b));
      return a;
    };

    // every goal, by uuid (a key result with check-ins follows its latest one)
    for (let g = 0; g < SIZE.goals; g++) await same((s) => `/rest/v2/${PATH_BY_KIND[s.refs.goalKinds[g]!]}/${s.refs.goals[g]}`);
    // every check-in
    for (let c = 0; c < SIZE.checkins; c++) await same((s) => `/rest/v2/checkins/${s.refs.checkins[c]}`);
    // lists, filters, sorts and counts
    for (const kind of ['objectives', 'key_results', 'initiatives']) {
      const all = (await same(() => `/rest/v2/${kind}?per_page=100`)) as { records: unknown[] };
      expect(all.records.length).toBeGreaterThan(0);
      await same((s) => `/rest/v2/${kind}?q[owners_uuid_eq]=${s.refs.users[1]}`);
      await same((s) => `/rest/v2/${kind}?q[labels_uuid_eq]=${s.refs.labels[2]}`);
      await same((s) => `/rest/v2/${kind}?q[teams_uuid_eq]=${s.refs.teams[0]}`);
      await same((s) => `/rest/v2/${kind}?q[time_period_uuid_eq]=${s.refs.periods[0]}&count=true`);
      await same(() => `/rest/v2/${kind}?q[current_status_eq]=on_track`);
      await same(() => `/rest/v2/${kind}?q[s]=last_checkin_date%20desc`);
    }
    await same((s) => `/rest/v2/initiatives?q[ancestors_uuid_eq]=${s.refs.goals[0]}`);
    await same(() => '/rest/v2/checkins?per_page=100');
    await same(() => '/rest/v2/users?per_page=100');
    await same(() => '/rest/v2/teams');
    await same(() => '/rest/v2/labels');

    // the items themselves: each goal's partition (entity, entries, history from the stream), each
    // checked-in goal's check-in order partition, each check-in's partition, the references in periods and teams
    // in order of their normalized JSON: a partition sorts by sort key, and sort keys hold uuids (random on each side)
    const itemsOf = (_s: Side, i: number, pk: string) =>
      partition(pk).then((items) => (norm[i]!(items) as unknown[]).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))));
    const sameItems = async (pk: (s: Side) => string, settle = false) => {
      const check = async () => {
        const [a, b] = await Promise.all(sides.map((s, i) => itemsOf(s, i, pk(s))));
        expect(a, pk(sides[0])).toEqual(b);
        return a as unknown[];
      };
      return settle ? eventually(check, STREAM_LAG_MS) : check();
    };
    let checkedIn = 0;
    for (let g = 0; g < SIZE.goals; g++) {
      // history is written from the stream: the API side's may lag
      await sameItems((s) => keys.entity(s.tenantId, 'goal', s.refs.goals[g]!).PK, true);
      if ((await sameItems((s) => checkinOrderItemKey(s.tenantId, s.refs.goals[g]!, '').PK)).length) checkedIn++;
    }
    expect(checkedIn).toBeGreaterThan(5);
    for (let c = 0; c < SIZE.checkins; c++) {
      await sameItems((s) => keys.entity(s.tenantId, 'checkin', s.refs.checkins[c]!).PK);
      const [entity] = await partition(keys.entity(straight.tenantId, 'checkin', straight.refs.checkins[c]!).PK);
      expect(entity!.GSI1PK).toBe(keys.entityList(straight.tenantId, checkinListName((entity!.rec as { goal_uuid: string }).goal_uuid)));
    }
    // the periods hold the goals' references (one tree here: every goal in the first period)
    let references = 0;
    for (let p = 0; p < 4; p++)
      references += (await sameItems((s) => keys.entity(s.tenantId, 'time_period', s.refs.periods[p]!).PK)).length - 1;
    expect(references).toBe(SIZE.goals);
    for (let m = 0; m < SIZE.teams; m++) await sameItems((s) => keys.entity(s.tenantId, 'team', s.refs.teams[m]!).PK);
    for (let u = 0; u < SIZE.users; u++) await sameItems((s) => keys.entity(s.tenantId, 'user', s.refs.users[u]!).PK);

    // the team objectives roll up from their key results: the aggregate the check-ins move is stored on them
    const teamObjective = straight.refs.goalKinds.indexOf('objective', 1);
    const [stored] = await partition(keys.entity(straight.tenantId, 'goal', straight.refs.goals[teamObjective]!).PK);
    expect(stored!.rec).toMatchObject({ progress_mode: 'rollup', rollup: { weight: expect.any(Number), sum: expect.any(Number) } });

    // a goal with check-ins has history, the same on both sides (straight: written by the projection in process)
    const krIndex = straight.refs.goalKinds.indexOf('key_result');
    const history = (await same((s) => `/rest/v2/key_results/${s.refs.goals[krIndex]}/history`)) as { records: unknown[] };
    expect(history.records.length).toBeGreaterThan(0);
  });
});
