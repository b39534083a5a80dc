import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { config } from '#shared/config.ts';
import { baseDb } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getSide } from '#shared/db/side-items.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { CHECKIN_LISTS, checkinListName, LEGACY_CHECKIN_LISTS } from '#shared/domain/checkins/entity.ts';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { eventually } from '../support/eventually.ts';
import { CHECKINS, checkin, checkinApi } from './checkins.fixture.ts';
import { goal, goalTenant, uuids } from './goals.fixture.ts';

/**
 * The check-in list went from 16 shards to 2 (shared/domain/checkins/list-shards.ts): a tenant whose check-ins
 * are still in the old 16 is read in full until `reshard-checkin-lists` moves them and marks it; then 2 are read.
 */
const header = (res: { headers: Headers }, name: string) => Number(res.headers.get(name));

describe('check-in list shards: 16 old ones read until the tenant is resharded', () => {
  it('an unmarked tenant lists check-ins in the old shards in order, label renames reach them; the command moves them, marks the tenant, and does nothing the second time', async () => {
    const { t, period } = await goalTenant();
    const data: DataCtx = { tenantId: t.tenantUuid, db: baseDb() };
    // the tenant as one created before: not marked (nothing has read its marker yet)
    await new WriteTx(data).deleteSide(keys.checkinListsState(t.tenantUuid)).commit();
    const T = config.tableName;
    const raw = async (key: { PK: string; SK: string }) =>
      (await data.db.send(new GetCommand({ TableName: T, Key: key, ConsistentRead: true }))).Item!;
    const indexed = async (pk: string) =>
      (
        await data.db.send(
          new QueryCommand({
            TableName: T,
            IndexName: 'GSI1',
            KeyConditionExpression: 'GSI1PK = :pk',
            ExpressionAttributeValues: { ':pk': pk },
          }),
        )
      ).Items ?? [];

    const goals = [];
    for (let i = 0; i < 8; i++) goals.push(await goal(t.admin, 'objectives', { title: `g${i}`, time_period_uuid: period.uuid }));
    const made: Array<{ uuid: string; goal: string; label?: string }> = [];
    for (const [i, g] of [...goals, ...goals].entries()) {
      const c = await checkin(t.admin, { goal_uuid: g.uuid, value: i, ...(i % 3 === 0 ? { labels: ['Sharded'] } : {}) });
      made.push({ uuid: c.uuid, goal: g.uuid, ...(c.labels[0] ? { label: c.labels[0].uuid } : {}) });
    }
    const label = made.find((c) => c.label)!.label!;

    // written as the code before wrote them: the list and label entries in the goal's shard of 16, no list_shards
    const oldList = (goalUuid: string) => checkinListName(goalUuid, 16);
    for (const c of made) {
      await data.db.send(
        new UpdateCommand({
          TableName: T,
          Key: keys.entity(t.tenantUuid, 'checkin', c.uuid),
          UpdateExpression: 'SET GSI1PK = :pk REMOVE rec.list_shards',
          ExpressionAttributeValues: { ':pk': keys.entityList(t.tenantUuid, oldList(c.goal)) },
        }),
      );
      if (c.label)
        await data.db.send(
          new UpdateCommand({
            TableName: T,
            Key: keys.entry(t.tenantUuid, 'checkin', c.uuid, 'label', c.label),
            UpdateExpression: 'SET GSI1PK = :pk',
            ExpressionAttributeValues: { ':pk': keys.entryList(t.tenantUuid, oldList(c.goal), 'label', c.label) },
          }),
        );
    }
    const inOldShards = made.filter((c) => !CHECKIN_LISTS.includes(oldList(c.goal)));
    expect(inOldShards.length).toBeGreaterThan(0); // 16 check-ins over 8 random goals: all in shard 0 or 1 has odds 8^-8
    for (const c of inOldShards) expect((await indexed(keys.entityList(t.tenantUuid, oldList(c.goal)))).map((e) => e.id)).toContain(c.uuid);

    // still listed, all of them, in creation order (merged over the 16 old names), and page by page
    const page = await t.admin.get(`${CHECKINS}?per_page=20`);
    expect(uuids(page.body.data.records)).toEqual(made.map((c) => c.uuid));
    const unmarkedCalls = header(page, 'x-db-calls');
    const first5 = await t.admin.get(`${CHECKINS}?per_page=5`);
    expect(uuids(first5.body.data.records)).toEqual(made.slice(0, 5).map((c) => c.uuid));
    const next5 = await t.admin.get(`${CHECKINS}?per_page=5&cursor=${encodeURIComponent(first5.body.data.pagy.next_cursor)}`);
    expect(uuids(next5.body.data.records)).toEqual(made.slice(5, 10).map((c) => c.uuid));

    // a label renamed reaches the check-ins in old shards; that write moves each (its list and label entries)
    expect((await t.admin.put(`/rest/v2/labels/${label}`, { name: 'Sharded renamed' })).status).toBe(200);
    const labelled = made.filter((c) => c.label);
    await eventually(async () => {
      for (const c of labelled)
        expect((await checkinApi(t.admin).get(c.uuid)).body!.data.record.labels).toEqual([{ uuid: label, name: 'Sharded renamed' }]);
    });
    for (const c of labelled) {
      expect((await raw(keys.entity(t.tenantUuid, 'checkin', c.uuid))).GSI1PK).toBe(keys.entityList(t.tenantUuid, checkinListName(c.goal)));
      expect((await raw(keys.entry(t.tenantUuid, 'checkin', c.uuid, 'label', c.label!))).GSI1PK).toBe(
        keys.entryList(t.tenantUuid, checkinListName(c.goal), 'label', label),
      );
    }

    const unmoved = [];
    for (const c of made) if ((await raw(keys.entity(t.tenantUuid, 'checkin', c.uuid))).rec.list_shards === undefined) unmoved.push(c);
    expect(unmoved.length).toBeGreaterThan(0);
    expect(await runAdmin(['reshard-checkin-lists', '--tenant', t.tenantUuid, '--concurrency', '3'])).toEqual({
      tenant_uuid: t.tenantUuid,
      checkins: made.length,
      moved: unmoved.length,
    });
    expect(await getSide(data, keys.checkinListsState(t.tenantUuid))).toMatchObject({ list_shards: 2 });
    const versions = new Map<string, number>();
    for (const c of made) {
      const item = await raw(keys.entity(t.tenantUuid, 'checkin', c.uuid));
      expect(item.GSI1PK).toBe(keys.entityList(t.tenantUuid, checkinListName(c.goal)));
      expect(item.rec.list_shards).toBe(2);
      versions.set(c.uuid, item.v);
      if (c.label)
        expect((await raw(keys.entry(t.tenantUuid, 'checkin', c.uuid, 'label', c.label))).GSI1PK).toBe(
          keys.entryList(t.tenantUuid, checkinListName(c.goal), 'label', label),
        );
    }
    for (const old of LEGACY_CHECKIN_LISTS.filter((l) => !CHECKIN_LISTS.includes(l))) {
      expect(await indexed(keys.entityList(t.tenantUuid, old))).toEqual([]);
      expect(await indexed(keys.entryList(t.tenantUuid, old, 'label', label))).toEqual([]);
    }

    // the same list, read from the 2 shards only (no marker read once the container knows it, 16 Queries fewer)
    await t.admin.get(CHECKINS);
    const marked = await t.admin.get(`${CHECKINS}?per_page=20`);
    expect(uuids(marked.body.data.records)).toEqual(made.map((c) => c.uuid));
    expect(header(marked, 'x-db-calls')).toBeLessThanOrEqual(unmarkedCalls - 16);
    expect(header(marked, 'x-db-round-trips')).toBe(2);
    // a cursor taken before the reshard still pages on
    const after5 = await t.admin.get(`${CHECKINS}?per_page=5&cursor=${encodeURIComponent(first5.body.data.pagy.next_cursor)}`);
    expect(uuids(after5.body.data.records)).toEqual(made.slice(5, 10).map((c) => c.uuid));

    // a second run writes nothing
    expect(await runAdmin(['reshard-checkin-lists', '--tenant', t.tenantUuid])).toEqual({
      tenant_uuid: t.tenantUuid,
      checkins: made.length,
      moved: 0,
    });
    for (const c of made) expect((await raw(keys.entity(t.tenantUuid, 'checkin', c.uuid))).v).toBe(versions.get(c.uuid));
  });

  it('a new tenant is marked at creation: its list reads the 2 shards', async () => {
    const { t, period } = await goalTenant();
    expect(await getSide({ tenantId: t.tenantUuid, db: baseDb() }, keys.checkinListsState(t.tenantUuid))).toMatchObject({ list_shards: 2 });
    const g = await goal(t.admin, 'objectives', { title: 'g', time_period_uuid: period.uuid });
    const c = await checkin(t.admin, { goal_uuid: g.uuid, value: 1 });
    await t.admin.get(CHECKINS);
    const res = await t.admin.get(CHECKINS);
    expect(uuids(res.body.data.records)).toEqual([c.uuid]);
    expect(header(res, 'x-db-round-trips')).toBe(2);
  });
});
