import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { config } from '#shared/config.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { goalEntity, type GoalRecord, type GoalStatus } from '#shared/domain/goals/entity.ts';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { newTenant, type Api, type TenantFixture } from '../support/api.ts';
import { pacedByStream } from '../support/paced-seed.ts';

/**
 * A tenant far past 10,000 goals: seeded straight into DynamoDB Local with the items the store writes for a
 * goal (batch writes, paced by the change stream: test/support/paced-seed.ts), its read models kept by the stream
 * and checked by the backfill, then every kind of filter, sort, count and deep page checked for the right answer
 * and for what it read (the local stack's x-db-* headers).
 *
 * Runs on its own after the rest of the suite (scripts/dev test): its ten thousand inserts keep the change
 * stream busy for a while, which would delay the end-to-end tests that wait on derived state.
 */
const N = 10_200;
const OBJ = '/rest/v2/objectives';

interface Measured {
  status: number;
  body: any;
  roundTrips: number;
  /** DynamoDB calls, overlapping or not (round trips count overlap as it happened: timing on a loaded machine). */
  calls: number;
  rcu: number;
  itemsRead: number;
}

async function measured(api: Api, path: string): Promise<Measured> {
  const started = Date.now();
  const res = await api.get(path);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  if (process.env.SCALE_LOG)
    console.log(
      `${Date.now() - started} ms rt=${res.headers.get('x-db-round-trips')} rcu=${res.headers.get('x-db-read-units')} items=${res.headers.get('x-db-items-read')} ${path}`,
    );
  const h = (n: string) => Number(res.headers.get(n));
  return {
    status: res.status,
    body: res.body,
    roundTrips: h('x-db-round-trips'),
    calls: h('x-db-calls'),
    rcu: h('x-db-read-units'),
    itemsRead: h('x-db-items-read'),
  };
}

/** The Put items the store's transaction for creating `record` holds (what a create writes), as batch put requests. */
function createItems(ctx: DataCtx, record: GoalRecord): Array<Record<string, unknown>> {
  const tx = new WriteTx(ctx).create(goalEntity, record);
  const items = (tx as unknown as { items: Array<{ Put?: { Item: Record<string, unknown> } }> }).items;
  return items.flatMap((i) => (i.Put ? [i.Put.Item] : []));
}

async function batchPut(ctx: DataCtx, items: Array<Record<string, unknown>>, concurrency = 12): Promise<void> {
  const chunks: Array<Array<Record<string, unknown>>> = [];
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25));
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < chunks.length) {
        let requests = chunks[next++]!.map((Item) => ({ PutRequest: { Item } }));
        for (let attempt = 0; requests.length; attempt++) {
          const out = await ctx.db.send(new BatchWriteCommand({ RequestItems: { [config.tableName]: requests } }));
          requests = (out.UnprocessedItems?.[config.tableName] ?? []) as typeof requests;
          if (requests.length) await new Promise((r) => setTimeout(r, 20 * 2 ** Math.min(attempt, 6)));
        }
      }
    }),
  );
}

describe(`a tenant of ${N.toLocaleString('en')} objectives`, () => {
  let t: TenantFixture;
  let member: Api;
  let alice: string, bob: string, team: string, label: string, p1: string, p2: string;
  let goals: GoalRecord[];
  /** Uuids of the listed (not discarded) seeded goals matching `pred`, in creation order. */
  const expected = (pred: (g: GoalRecord) => boolean, seen: (g: GoalRecord) => boolean = () => true) =>
    goals.filter((g) => !g.discarded_at && seen(g) && pred(g)).map((g) => g.uuid);
  const uuids = (m: Measured) => (m.body.data.records as Array<{ uuid: string }>).map((r) => r.uuid);
  /** What an index-served filter may read: about what it returns. */
  const indexBound = (returned: number) => 2 * returned + 20;

  beforeAll(async () => {
    t = await newTenant();
    const ctx: DataCtx = { tenantId: t.tenantUuid, db: baseDb() };
    const [a, b, m] = await Promise.all([t.user(), t.user(), t.user()]);
    [alice, bob, member] = [a.uuid, b.uuid, m.api];
    team = (await t.admin.post('/rest/v2/teams', { name: `scale-${randomUUID().slice(0, 6)}` })).body.data.record.uuid;
    label = (await t.admin.post('/rest/v2/labels', { name: `scale-${randomUUID().slice(0, 6)}` })).body.data.record.uuid;
    p1 = (await t.admin.post('/rest/v2/time_periods', { name: 'H1', start_date: '2026-01-01', end_date: '2026-06-30' })).body.data.record
      .uuid;
    p2 = (await t.admin.post('/rest/v2/time_periods', { name: 'H2', start_date: '2026-07-01', end_date: '2026-12-31' })).body.data.record
      .uuid;
    // A key result made through the API is the template: every seeded objective is its record with new values.
    const made = await t.admin.post('/rest/v2/key_results', { title: 'template', time_period_uuid: p1 });
    const template = (await getEntity(ctx, goalEntity, made.body.data.record.uuid))!.record;

    const start = Date.parse('2026-01-01T00:00:00.000Z');
    const others: GoalStatus[] = ['not_started', 'in_progress', 'behind'];
    goals = Array.from({ length: N }, (_, i) => {
      const uuid = randomUUID();
      const at = new Date(start + i * 1000).toISOString();
      const discarded = i % 510 === 17;
      return {
        ...template,
        uuid,
        type: 'objective',
        path: uuid,
        title: i % 3400 === 99 ? `Find the needle ${i}` : `Seeded goal ${i}`,
        created_at: at,
        updated_at: at,
        current_status: i % 340 === 7 ? 'on_track' : others[i % 3]!,
        owner_uuids: i % 255 === 3 ? [alice] : i % 4 === 3 ? [bob] : [],
        label_uuids: i % 408 === 5 ? [label] : [],
        team_uuids: i % 204 === 11 ? [team] : [],
        time_period_uuid: i % 170 === 13 ? p2 : p1,
        last_checkin_date:
          i % 102 === 1 ? new Date(Date.parse('2026-01-01') + ((i * 7) % 300) * 86_400_000).toISOString().slice(0, 10) : null,
        visibility: i % 2040 === 9 ? 'limited' : 'public',
        discarded_at: discarded ? at : null,
        discarded_by_uuid: discarded ? t.adminUuid : null,
        short_id: null,
        parent_links: [],
      } satisfies GoalRecord;
    });
    const seedStart = Date.now();
    await pacedByStream(goals, (chunk) =>
      batchPut(
        ctx,
        chunk.flatMap((g) => createItems(ctx, g)),
      ),
    );
    const seeded = Date.now();
    const rebuilt = await runAdmin(['rebuild-read-models', '--tenant', t.tenantUuid]);
    console.log(`seeded ${N} goals in ${seeded - seedStart} ms; read models rebuilt in ${Date.now() - seeded} ms`, rebuilt);
    // the stream built every read model as the backfill would: it walks every goal and finds nothing to write
    expect(rebuilt).toMatchObject({ goals: N + 1, written: 0 });
  }, 600_000);

  it('the backfill is idempotent: a second run writes nothing', async () => {
    expect(await runAdmin(['rebuild-read-models', '--tenant', t.tenantUuid])).toMatchObject({ goals: N + 1, written: 0 });
  }, 300_000);

  it('a selective status filter reads about what it returns, with an exact count, and pages', async () => {
    const want = expected((g) => g.current_status === 'on_track');
    expect(want).toHaveLength(30);
    const all = await measured(t.admin, `${OBJ}?q[current_status_eq]=on_track&per_page=100&count=true`);
    expect(all.status).toBe(200);
    expect(uuids(all)).toEqual(want);
    expect(all.body.data.pagy).toEqual({ page: 1, per_page: 100, offset: 0, next: null, prev: null, count: 30, next_cursor: null });
    expect(all.body.data.filters).toEqual({ current_status_eq: 'on_track' });
    expect(all.itemsRead).toBeLessThanOrEqual(indexBound(30));
    const first = await measured(t.admin, `${OBJ}?q[current_status_eq]=on_track&per_page=20`);
    expect(uuids(first)).toEqual(want.slice(0, 20));
    expect(first.body.data.pagy.next).toBe(2);
    expect(first.itemsRead).toBeLessThanOrEqual(indexBound(20));
    const second = await measured(t.admin, `${OBJ}?q[current_status_eq]=on_track&per_page=20&page=2`);
    expect(uuids(second)).toEqual(want.slice(20));
    expect(second.body.data.pagy.next).toBeNull();
  });

  it('status within a period, an owner, a label and a team: composite read models', async () => {
    const cases: Array<[string, (g: GoalRecord) => boolean]> = [
      [`q[time_period_uuid_eq]=${p1}&q[current_status_eq]=on_track`, (g) => g.time_period_uuid === p1 && g.current_status === 'on_track'],
      [
        `q[time_period_uuid_eq]=${p2}&q[status_in]=on_track,behind`,
        (g) => g.time_period_uuid === p2 && ['on_track', 'behind'].includes(g.current_status),
      ],
      [`q[owners_uuid_eq]=${bob}&q[current_status_eq]=on_track`, (g) => g.owner_uuids.includes(bob) && g.current_status === 'on_track'],
      [
        `q[owners_uuid_eq]=${alice}&q[current_status_in][]=not_started&q[current_status_in][]=in_progress`,
        (g) => g.owner_uuids.includes(alice) && ['not_started', 'in_progress'].includes(g.current_status),
      ],
      [`q[labels_uuid_eq]=${label}&q[current_status_eq]=behind`, (g) => g.label_uuids.includes(label) && g.current_status === 'behind'],
      [
        `q[teams_uuid_eq]=${team}&q[current_status_not_eq]=in_progress`,
        (g) => g.team_uuids.includes(team) && g.current_status !== 'in_progress',
      ],
      [
        `q[teams_uuid_eq]=${team}&q[current_status_eq]=behind&q[title_cont]=goal`,
        (g) => g.team_uuids.includes(team) && g.current_status === 'behind',
      ],
      [`q[labels_uuid_eq]=${label}`, (g) => g.label_uuids.includes(label)],
      [`q[time_period_uuid_eq]=${p2}`, (g) => g.time_period_uuid === p2],
    ];
    for (const [query, pred] of cases) {
      const want = expected(pred);
      expect(want.length, query).toBeGreaterThan(0);
      const res = await measured(t.admin, `${OBJ}?${query}&per_page=100&count=true`);
      expect(res.status, query).toBe(200);
      expect(uuids(res), query).toEqual(want);
      expect(res.body.data.pagy.count, query).toBe(want.length);
      expect(res.itemsRead, query).toBeLessThanOrEqual(indexBound(want.length));
    }
  });

  it('count=true of the whole list and of a broad filter come from the counters', async () => {
    const whole = await measured(t.admin, `${OBJ}?count=true&per_page=1`);
    expect(whole.body.data.pagy.count).toBe(expected(() => true).length);
    expect(whole.body.data.records.map((r: { uuid: string }) => r.uuid)).toEqual(expected(() => true).slice(0, 1));
    expect(whole.roundTrips).toBeLessThanOrEqual(2); // caller beside the counter and the first keys, then the page
    expect(whole.itemsRead).toBeLessThan(40);
    const behind = await measured(t.admin, `${OBJ}?q[current_status_eq]=behind&count=true&per_page=5`);
    const want = expected((g) => g.current_status === 'behind');
    expect(want.length).toBeGreaterThan(3000);
    expect(behind.body.data.pagy.count).toBe(want.length);
    expect(uuids(behind)).toEqual(want.slice(0, 5));
    expect(behind.itemsRead).toBeLessThan(60);
    const inP1 = await measured(t.admin, `${OBJ}?q[time_period_uuid_eq]=${p1}&q[current_status_eq]=in_progress&count=true&per_page=5`);
    expect(inP1.body.data.pagy.count).toBe(expected((g) => g.time_period_uuid === p1 && g.current_status === 'in_progress').length);
    expect(inP1.itemsRead).toBeLessThan(60);
  });

  it('a member: limited goals it cannot see are neither listed nor counted', async () => {
    const seen = (g: GoalRecord) => g.visibility === 'public';
    const want = expected((g) => g.current_status === 'not_started', seen);
    expect(want.length).toBeLessThan(expected((g) => g.current_status === 'not_started').length);
    const res = await measured(member, `${OBJ}?q[current_status_eq]=not_started&count=true&per_page=3`);
    expect(res.body.data.pagy.count).toBe(want.length);
    expect(uuids(res)).toEqual(want.slice(0, 3));
    const whole = await measured(member, `${OBJ}?count=true&per_page=2&page=7`);
    expect(whole.body.data.pagy.count).toBe(expected(() => true, seen).length);
    expect(uuids(whole)).toEqual(expected(() => true, seen).slice(12, 14));
  });

  it('deep pages read keys only (from their page anchor on), and every page is right', async () => {
    const all = expected(() => true);
    const p1st = await measured(t.admin, `${OBJ}?per_page=20`);
    expect(uuids(p1st)).toEqual(all.slice(0, 20));
    expect(p1st.roundTrips).toBeLessThanOrEqual(3); // caller beside the first keys, the page, the name of the label goal 5 shows
    expect(p1st.rcu).toBeLessThanOrEqual(12);
    const p50 = await measured(t.admin, `${OBJ}?per_page=20&page=50`);
    expect(uuids(p50)).toEqual(all.slice(980, 1000));
    expect(p50.body.data.pagy).toMatchObject({ page: 50, next: 51, prev: 49 });
    // the page anchors (one goal a second: one anchor a goal, ~100 bytes against ~250 a key), keys from its bucket, the page
    expect(p50.roundTrips).toBeLessThanOrEqual(3);
    expect(p50.itemsRead).toBeLessThanOrEqual(1000 + 20 + 100);
    expect(p50.rcu).toBeLessThanOrEqual(30);
    const last = Math.ceil(all.length / 100);
    const end = await measured(t.admin, `${OBJ}?per_page=100&page=${last}`);
    expect(uuids(end)).toEqual(all.slice((last - 1) * 100));
    expect(end.body.data.pagy.next).toBeNull();
    const newest = await measured(t.admin, `${OBJ}?per_page=10&q[s]=created_at%20desc&page=3`);
    expect(uuids(newest)).toEqual([...all].reverse().slice(20, 30));
  });

  /** The listed goals in last-check-in order (contract 4): dated ones by date, never checked in last both ways, ties in creation order. */
  const checkinOrder = (desc: boolean) => {
    const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
    return goals
      .filter((g) => !g.discarded_at)
      .sort(
        (a, b) =>
          Number(!a.last_checkin_date) - Number(!b.last_checkin_date) ||
          cmp(a.last_checkin_date ?? '', b.last_checkin_date ?? '') * (desc ? -1 : 1) ||
          cmp(a.created_at, b.created_at),
      )
      .map((g) => g.uuid);
  };

  it('last_checkin_date order over the whole list, both directions: never checked in last, ties in creation order', async () => {
    const asc = checkinOrder(false);
    const desc = checkinOrder(true);
    const up = await measured(t.admin, `${OBJ}?q[s]=last_checkin_date%20asc&per_page=100`);
    expect(up.status).toBe(200);
    expect(uuids(up)).toEqual(asc.slice(0, 100)); // the checked-in goals first, earliest first
    const latest = await measured(t.admin, `${OBJ}?q[s]=last_checkin_date%20desc&per_page=100`);
    expect(uuids(latest)).toEqual(desc.slice(0, 100)); // the latest check-ins first, not the never-checked-in goals
    const down = await measured(t.admin, `${OBJ}?q[s]=last_checkin_date%20desc&per_page=50&page=200`);
    expect(uuids(down)).toEqual(desc.slice(9950, 10000)); // past the check-ins, the never-checked-in goals in creation order
    const filtered = await measured(t.admin, `${OBJ}?q[s]=last_checkin_date%20desc&q[last_checkin_date_not_null]=1&per_page=10`);
    expect(uuids(filtered)).toEqual(desc.filter((id) => goals.find((g) => g.uuid === id)!.last_checkin_date).slice(0, 10));
    // a filtered list this large walks the order; one in memory gives the same order
    const bobs = new Set(expected((g) => g.owner_uuids.includes(bob)));
    const walked = await measured(t.admin, `${OBJ}?q[s]=last_checkin_date%20desc&q[owners_uuid_eq]=${bob}&per_page=100`);
    expect(uuids(walked)).toEqual(desc.filter((id) => bobs.has(id)).slice(0, 100));
  });

  it('cursor pages of the read-model lists cost no more however deep, and return every goal once while goals are created and deleted', async () => {
    const desc = checkinOrder(true);
    const bobs = new Set(expected((g) => g.owner_uuids.includes(bob)));
    const onTrack = expected((g) => g.current_status === 'on_track');
    const made: string[] = [];
    // between two pages: a goal created (never checked in: it joins the end of the order) and the one before deleted
    const churn = async () => {
      made.push((await t.admin.post(OBJ, { title: 'churn', time_period_uuid: p1, owner_uuids: [bob] })).body.data.record.uuid);
      if (made.length > 1) expect((await t.admin.delete(`${OBJ}/${made.at(-2)}`)).status).toBe(200);
    };
    // [path, the goals in order, pages read, the page whose cost bounds the later ones]. The walked case's bound is
    // its page 2: its page 1 walks the 100 checked-in goals first, half of them bob's, and past them one goal in
    // four is his, so a page there walks twice the keys; from page 2 on every page walks the same density.
    const cases: Array<[string, string[], number, number, number?]> = [
      [`${OBJ}?q[s]=last_checkin_date%20desc&per_page=50`, desc.slice(0, 250), 5, 1], // the latest-first order's read model
      [`${OBJ}?q[s]=last_checkin_date%20desc&q[owners_uuid_eq]=${bob}&per_page=50`, desc.filter((id) => bobs.has(id)).slice(0, 200), 4, 2], // walked
      // the status read model, 2 shards merged: each reads ceil(8 / 2) + 1 keys first on page 1, and one more
      // (the cursor's own key) on a cursor page, 6; a page may need one follow-up Query of the shard holding most
      // of it, for what it still lacks (at most 3 keys): up to 2 + 3 keys more than page 1, whatever its depth
      [`${OBJ}?q[current_status_eq]=on_track&per_page=7`, onTrack, 5, 1, 5],
      [`${OBJ}?per_page=50&q[s]=created_at%20desc`, [...expected(() => true)].reverse().slice(0, 150), 3, 1],
    ];
    const pages = async (path: string, pageCount: number, between?: () => Promise<void>) => {
      const out = [await measured(t.admin, path)];
      for (
        let cursor = out[0]!.body.data.pagy.next_cursor;
        out.length < pageCount && cursor;
        cursor = out.at(-1)!.body.data.pagy.next_cursor
      ) {
        await between?.();
        out.push(await measured(t.admin, `${path}&cursor=${encodeURIComponent(cursor)}`));
      }
      return out;
    };
    for (const [path, want, pageCount, boundPage, keySlack = 2] of cases) {
      // The cost, with no write between pages (a read right after a write may read more, whatever the depth): a
      // cursor page reads from its position on, nothing before it, however deep. Counted in calls and items, which
      // the page's reads alone decide (round trips, calls in sequence, are bench's: overlap as timed).
      const quiet = await pages(path, pageCount);
      const bound = quiet[boundPage - 1]!;
      for (const [i, next] of quiet.entries()) {
        if (i < boundPage) continue;
        // (+1: a sharded list's page may need one follow-up Query of one shard that another page did not: list engine)
        expect(next.calls, `${path}: DynamoDB calls of cursor page ${i + 1}`).toBeLessThanOrEqual(bound.calls + 1);
        expect(next.itemsRead, `${path}: items read by cursor page ${i + 1}`).toBeLessThanOrEqual(bound.itemsRead + keySlack);
      }
      // The answer, with a goal created and one deleted between pages: every goal once, in order.
      const seen = (await pages(path, pageCount, churn)).flatMap(uuids);
      expect(seen.length, `${path}: records of ${pageCount} pages`).toBe(
        Math.min(want.length, pageCount * Number(new URLSearchParams(path.split('?')[1]).get('per_page'))),
      );
      const stable = seen.filter((id) => !made.includes(id));
      expect(new Set(seen).size, path).toBe(seen.length);
      expect(stable, path).toEqual(want.slice(0, stable.length));
    }
    for (const id of made) await t.admin.delete(`${OBJ}/${id}`);
  });

  it('a filter no index serves still answers over the whole list (no filter_too_broad)', async () => {
    // (past 10,000 examined: the last-check-in order above filtered on last_checkin_date reads every goal)
    const want = expected((g) => g.title.includes('needle'));
    expect(want).toHaveLength(3);
    const res = await measured(t.admin, `${OBJ}?q[title_cont]=NEEDLE&per_page=1&page=2`);
    expect(uuids(res)).toEqual([want[1]]);
    expect(res.body.data.pagy).toMatchObject({ next: 3, prev: 1 });
  }, 120_000);
});
