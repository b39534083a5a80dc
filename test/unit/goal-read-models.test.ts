import { describe, expect, it } from 'vitest';
import { entryListPartition } from '#shared/db/entry-lists.ts';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import { planGoalList, SMALL } from '#shared/domain/goals/list-plan.ts';
import type { ListEntry } from '#shared/db/model.ts';
import type { IndexEnv } from '#shared/list/resource.ts';
import type { Loader } from '#shared/list/entity-cache.ts';
import { parseFilters } from '#shared/list/filter.ts';
import { parsePageParams } from '#shared/list/params.ts';
import { keys } from '#shared/db/keys.ts';
import {
  counterDelta,
  counterKey,
  createdBucket,
  desiredEntries,
  dim,
  fingerprint,
  READ_MODELS_VERSION,
  shardOf,
} from '#shared/read-models/goal-entries.ts';
import { bucketEnd, bucketStart, placePage, placePageNewestFirst, SETTLE_MS, type Anchor } from '#shared/read-models/page-anchors.ts';
import type { GoalStats } from '#shared/read-models/goal-sync.ts';

const T = '11111111-1111-4111-8111-111111111111';
const P = '22222222-2222-4222-8222-222222222222';
const U = '33333333-3333-4333-8333-333333333333';
const V = '44444444-4444-4444-8444-444444444444';

const goal = (over: Partial<GoalRecord> = {}): GoalRecord =>
  ({
    uuid: '55555555-5555-4555-8555-55555555000a',
    type: 'objective',
    created_at: '2026-01-01T00:00:00.000Z',
    current_status: 'on_track',
    time_period_uuid: P,
    owner_uuids: [U],
    label_uuids: [],
    team_uuids: [],
    delegate_uuids: [],
    visible_entities: [],
    creator_uuid: U,
    visibility: 'public',
    discarded_at: null,
    archived_at: null,
    last_checkin_date: null,
    ...over,
  }) as GoalRecord;

describe('goal read-model entries', () => {
  it('one entry per list a goal is in, none when discarded', () => {
    const entries = desiredEntries(T, goal({ label_uuids: [V, V] }));
    expect(entries.map((e) => e.sk).sort()).toEqual(['checkin', 'checkin_desc', `label#${V}`, `owner#${U}`, 'period', 'status'].sort());
    expect(entries.find((e) => e.sk === 'period')!.gsiPk).toBe(`T#${T}#objective@rm_period_status#${P}#on_track`);
    // the status entry also counts the goal in its creation bucket (the page anchor)
    expect(entries.find((e) => e.sk === 'status')!.dims).toEqual([dim.all, dim.status('on_track'), dim.created('2026-01-01T00:00:00.0')]);
    expect(entries.find((e) => e.sk === 'checkin')!.gsiPk).toBe(`T#${T}#objective@rm_checkin#0`);
    expect(entries.find((e) => e.sk === 'checkin')!.gsiSk.startsWith('~#')).toBe(true);
    expect(
      desiredEntries(T, goal({ last_checkin_date: '2026-02-03' }))
        .find((e) => e.sk === 'checkin')!
        .gsiSk.startsWith('2026-02-03#'),
    ).toBe(true);
    // latest first is its own order, read forwards: the date inverted (later dates first), never checked in still last
    const desc = (d: string | null) => desiredEntries(T, goal({ last_checkin_date: d })).find((e) => e.sk === 'checkin_desc')!;
    expect(desc(null).gsiPk).toBe(`T#${T}#objective@rm_checkin_desc#0`);
    expect(desc('2026-02-03').gsiSk.startsWith('7973-97-96#')).toBe(true);
    expect([desc(null), desc('2026-02-03'), desc('2026-12-31'), desc('2025-01-01')].map((e) => e.gsiSk.slice(0, 10)).sort()).toEqual([
      '7973-87-68',
      '7973-97-96',
      '7974-98-98',
      '~#2026-01-',
    ]);
    expect(desiredEntries(T, goal({ discarded_at: '2026-01-02T00:00:00.000Z' }))).toEqual([]);
    expect(desiredEntries(T, undefined)).toEqual([]);
  });

  it('a status change moves each counter by one; a change of nothing counted moves none', () => {
    const before = new Map(desiredEntries(T, goal()).map((e) => [e.sk, e]));
    const after = new Map(desiredEntries(T, goal({ current_status: 'behind' })).map((e) => [e.sk, e]));
    const owner = counterDelta(before.get(`owner#${U}`), after.get(`owner#${U}`));
    expect(Object.fromEntries(owner)).toEqual({
      [dim.ownerStatus(U, 'on_track')]: { n: -1, nl: 0 },
      [dim.ownerStatus(U, 'behind')]: { n: 1, nl: 0 },
    });
    expect(counterDelta(before.get('status'), before.get('status')).size).toBe(0);
    const limited = desiredEntries(T, goal({ visibility: 'limited' })).find((e) => e.sk === 'status')!;
    const bucket = dim.created('2026-01-01T00:00:00.0');
    expect(Object.fromEntries(counterDelta(before.get('status'), limited))).toEqual({
      [dim.all]: { n: 0, nl: 1 },
      [dim.status('on_track')]: { n: 0, nl: 1 },
      [bucket]: { n: 0, nl: 1 },
    });
    expect(fingerprint(limited)).not.toBe(fingerprint(before.get('status')!));
    expect(Object.fromEntries(counterDelta(undefined, before.get('status')))).toEqual({
      [dim.all]: { n: 1, nl: 0 },
      [dim.status('on_track')]: { n: 1, nl: 0 },
      [bucket]: { n: 1, nl: 0 },
    });
    // a creation bucket is counted in the kind's anchor partition, every other dimension in its counter item
    expect(counterKey(T, 'objective', bucket, 1)).toEqual({ PK: `T#${T}#goalanchor#objective`, SK: '2026-01-01T00:00:00.0#1' });
    expect(counterKey(T, 'objective', dim.all, 1)).toEqual({ PK: `T#${T}#goalcount#objective#all#1`, SK: '#' });
  });

  it('shards are stable and in range', () => {
    for (const id of ['55555555-5555-4555-8555-555555550000', '55555555-5555-4555-8555-55555555ffff', 'not-a-uuid']) {
      const s = shardOf(id, 16);
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThan(16);
      expect(shardOf(id, 16)).toBe(s);
    }
  });
});

describe('goal list planner', () => {
  const env: IndexEnv = {
    ctx: { tenantId: T, db: undefined as never },
    loader: {} as Loader,
    entryPartition: (of, v) => entryListPartition(T, of, v),
    gate: Promise.resolve(),
  };
  const attributes = new Map(
    [
      'current_status',
      'status',
      'time_period_uuid',
      'owners_uuid',
      'labels_uuid',
      'teams_uuid',
      'title',
      'discarded_at',
      'uuid',
      'last_checkin_date',
    ].map((a) => [a, { type: (a === 'last_checkin_date' ? 'date' : a === 'discarded_at' ? 'timestamp' : 'string') as 'string' }]),
  );
  const query = (qs: string) => {
    const { page, rest } = parsePageParams([...new URLSearchParams(qs)]);
    const { filters, sort } = parseFilters(rest, attributes);
    return { filters, sort, page, env };
  };
  const stats = (counts: Record<string, number>, opts: { ready?: boolean; limited?: Record<string, number> } = {}) => {
    const asked: string[][] = [];
    const read = async (dims: string[]): Promise<GoalStats> => {
      asked.push(dims);
      return {
        ready: opts.ready ?? true,
        version: opts.ready === false ? 0 : READ_MODELS_VERSION,
        count: (d) => ({ n: counts[d] ?? 0, nl: opts.limited?.[d] ?? 0 }),
      };
    };
    return { read, asked };
  };
  const plan = (qs: string, s: ReturnType<typeof stats>, seesAll = true) =>
    planGoalList({ kind: 'objective', seesAll: Promise.resolve(seesAll), listed: () => true }, query(qs), {
      stats: s.read,
      known: 0,
      anchors: async () => [],
      recent: async () => [],
      now: Date.now(),
    });

  it('a plain page and filters no read model serves take the generic plan without reading counters', async () => {
    const s = stats({});
    expect(await plan('page=3', s)).toBeUndefined();
    expect(await plan('q[title_cont]=x', s)).toBeUndefined();
    expect(await plan(`q[uuid_eq]=${U}&q[current_status_eq]=on_track`, s)).toBeUndefined();
    expect(await plan('q[current_status_eq]=on_track&q[discarded_at_not_null]=1', s)).toBeUndefined();
    expect(s.asked).toEqual([]);
  });

  it('a large list with a selective status: the status read model, re-checked on the goals', async () => {
    const s = stats({ [dim.all]: 50_000, [dim.status('on_track')]: 30 });
    const p = (await plan('q[current_status_eq]=on_track', s))!;
    expect('partitions' in p.source && p.source.partitions).toEqual([
      `T#${T}#objective@rm_status#on_track#0`,
      `T#${T}#objective@rm_status#on_track#1`,
    ]);
    expect(p.served.map((f) => f.attribute)).toEqual(['current_status']);
    expect(p.verify!(goal())).toBe(true);
    expect(p.verify!(goal({ current_status: 'behind' }))).toBe(false);
    expect(p.count).toBeUndefined(); // not asked
  });

  it('a list about as small as the read model is read exactly (read-your-writes)', async () => {
    const p = (await plan('q[current_status_eq]=on_track&count=true', stats({ [dim.all]: 13, [dim.status('on_track')]: 3 })))!;
    expect('partitions' in p.source && p.source.partitions).toEqual([`T#${T}#objective`]);
    expect(p.served).toEqual([]);
    expect(p.count).toBeUndefined(); // walked
  });

  it('picks the smallest candidate: an association alone, or its composite with status', async () => {
    const big = { [dim.period(P)]: 40_000, [dim.periodStatus(P, 'behind')]: 12, [dim.owner(U)]: 5, [dim.ownerStatus(U, 'behind')]: 2 };
    const both = (await plan(`q[time_period_uuid_eq]=${P}&q[owners_uuid_eq]=${U}&q[current_status_eq]=behind`, stats(big)))!;
    // the owner's own list holds 5 goals: exact and small, so it wins over the composites
    expect('partitions' in both.source && both.source.partitions).toEqual([`T#${T}#objective@owner#${U}`]);
    const composite = (await plan(`q[time_period_uuid_eq]=${P}&q[current_status_eq]=behind&count=true`, stats(big)))!;
    expect(SMALL).toBeGreaterThan(12);
    expect('partitions' in composite.source && composite.source.partitions).toEqual([`T#${T}#objective@rm_period_status#${P}#behind`]);
    expect(composite.count).toBeUndefined(); // 12: small, walked
  });

  it('count=true from counters only when exact for the query and the caller', async () => {
    const counts = { [dim.all]: 40_000, [dim.status('behind')]: 20_000, [dim.owner(U)]: 3_000, [dim.owner(V)]: 4_000 };
    const count = async (qs: string, s = stats(counts), seesAll = true) => (await plan(qs, s, seesAll))!.count;
    expect(await count('count=true')).toBe(40_000);
    expect(await count('q[current_status_eq]=behind&count=true')).toBe(20_000);
    expect(await count('q[current_status_eq]=behind&q[title_cont]=x&count=true')).toBeUndefined(); // a residual
    expect(await count(`q[owners_uuid_in]=${U},${V}&count=true`)).toBeUndefined(); // a goal of both owners counts twice
    expect(await count(`q[owners_uuid_eq]=${V}&count=true`)).toBe(4_000);
    const limited = stats(counts, { limited: { [dim.all]: 2 } });
    expect(await count('count=true', limited, false)).toBeUndefined(); // a member may not see the limited ones
    expect(await count('count=true', limited, true)).toBe(40_000);
    expect(await count('q[current_status_eq]=behind&count=true', limited, false)).toBe(20_000); // none limited there
  });

  it('one exact list and no status: its keys are read while the counters are (they only count it)', async () => {
    const s = stats({ [dim.period(P)]: 4_000 });
    const p = (await plan(`q[time_period_uuid_eq]=${P}&count=true`, s))!;
    expect('partitions' in p.source && p.source.partitions).toEqual([`T#${T}#objective@time_period#${P}`]);
    expect(p.count).toBeInstanceOf(Promise); // the plan did not wait for it
    expect(await p.count).toBe(4_000);
    expect(await (await plan(`q[time_period_uuid_eq]=${P}&count=true`, stats({ [dim.period(P)]: 75 })))!.count).toBeUndefined(); // small: walked
    expect(
      await (await plan(`q[time_period_uuid_eq]=${P}&count=true`, stats({ [dim.period(P)]: 4_000 }, { ready: false })))!.count,
    ).toBeUndefined();
  });

  it('names what a read model kept by the stream decides: a read-model list a filter, the check-in order the order', async () => {
    const counts = { [dim.all]: 50_000, [dim.status('on_track')]: 30, [dim.period(P)]: 40, [dim.periodStatus(P, 'on_track')]: 35 };
    expect((await plan('q[current_status_eq]=on_track', stats(counts)))!.readModel).toEqual(['filter']);
    expect((await plan('q[current_status_eq]=on_track', stats({ [dim.all]: 13, [dim.status('on_track')]: 3 })))!.readModel).toBeUndefined();
    // the period's own list (exact) about as small as its composite with status: read exactly, nothing to say
    expect((await plan(`q[time_period_uuid_eq]=${P}&q[current_status_eq]=on_track`, stats(counts)))!.readModel).toBeUndefined();
    expect((await plan('q[s]=last_checkin_date desc', stats({ [dim.all]: 10 })))!.readModel).toEqual(['order']);
    expect((await plan('count=true', stats(counts)))!.readModel).toBeUndefined(); // a count from counters: the engine says so
  });

  it('not ready: the generic plan', async () => {
    expect(await plan('q[current_status_eq]=on_track', stats({ [dim.all]: 50_000 }, { ready: false }))).toBeUndefined();
  });

  it('last_checkin_date order: the whole list from the order read model at any size (valid once the read models are built); a filtered small list in memory', async () => {
    const whole = (await plan('q[s]=last_checkin_date desc', stats({ [dim.all]: 10 })))!;
    expect(whole).toMatchObject({ ordered: true, served: [] });
    expect('partitions' in whole.source && whole.source.partitions).toEqual([`T#${T}#objective@rm_checkin_desc#0`]);
    const up = (await plan('q[s]=last_checkin_date asc', stats({ [dim.all]: 10 })))!;
    expect('partitions' in up.source && up.source.partitions).toEqual([`T#${T}#objective@rm_checkin#0`]);
    // a position in the order and its key, both ways: never checked in is null, dates as they are
    expect(whole.position!.of('7973-97-96#2026-01-01T00:00:00.000Z#g')).toEqual({ v: '2026-02-03', k: '2026-01-01T00:00:00.000Z#g' });
    expect(whole.position!.key({ v: '2026-02-03', k: 'c#g' })).toBe('7973-97-96#c#g');
    expect(whole.position!.key({ v: null, k: 'c#g' })).toBe('~#c#g');
    expect(up.position!.of('~#c#g')).toEqual({ v: null, k: 'c#g' });
    expect(await whole.valid).toBe(true);
    expect(await (await plan('q[s]=last_checkin_date asc', stats({ [dim.all]: 10 }, { ready: false })))!.valid).toBe(false);
    // a tenant this container has seen ready at the version: nothing read to plan it
    const quiet = stats({});
    const known = (await planGoalList(
      { kind: 'objective', seesAll: Promise.resolve(true), listed: () => true },
      query('q[s]=last_checkin_date desc'),
      { stats: quiet.read, known: READ_MODELS_VERSION, anchors: async () => [], recent: async () => [], now: 0 },
    ))!;
    expect(await known.valid).toBe(true);
    expect(quiet.asked).toEqual([]);
    expect(
      (await plan('q[s]=last_checkin_date desc&q[current_status_eq]=behind', stats({ [dim.all]: 50, [dim.status('behind')]: 20 })))!
        .ordered,
    ).toBeUndefined();
    const p = (await plan(
      'q[s]=last_checkin_date desc&q[current_status_eq]=behind',
      stats({ [dim.all]: 50_000, [dim.status('behind')]: 20_000 }),
    ))!;
    expect(p).toMatchObject({ ordered: true, served: [] });
    expect('partitions' in p.source && p.source.partitions).toHaveLength(1);
  });

  it('a deep page of the whole list starts at its page anchor, unless the caller may not see goals counted before it', async () => {
    const anchors = async (): Promise<Anchor[]> => [
      { bucket: '2026-01-01T00:00:00.0', n: 150, nl: 0 },
      { bucket: '2026-01-01T00:00:00.1', n: 100, nl: 1 },
      { bucket: '2026-01-01T00:00:00.2', n: 100, nl: 0 },
    ];
    const now = Date.parse('2026-01-02T00:00:00.000Z');
    const deep = (qs: string, seesAll = true, ready = true, at = now) =>
      planGoalList({ kind: 'objective', seesAll: Promise.resolve(seesAll), listed: () => true }, query(qs), {
        stats: stats({}, { ready }).read,
        known: 0,
        anchors,
        recent: async () => [],
        now: at,
      });
    expect(await deep('page=5')).toBeUndefined(); // 80 keys: walked
    const p = (await deep('page=14&per_page=20'))!; // skip 260: in the third bucket, after 250 goals
    expect(p).toMatchObject({ skipped: 250, served: [], source: { partitions: [`T#${T}#objective`], from: '2026-01-01T00:00:00.2' } });
    expect(p.readModel).toEqual(['position']); // the anchors placed the page
    expect(await deep('page=14&per_page=20', false)).toBeUndefined(); // a limited goal before it
    expect(await deep('page=14&per_page=20', true, false)).toBeUndefined(); // read models not built
    // buckets younger than SETTLE_MS are not trusted: the page reads keys from the first of them
    expect(await deep('page=14&per_page=20', true, true, Date.parse('2026-01-01T00:00:00.050Z') + SETTLE_MS)).toBeUndefined();
    expect((await deep('page=14&per_page=20', true, true, Date.parse('2026-01-01T00:00:00.150Z') + SETTLE_MS))!).toMatchObject({
      skipped: 150,
      source: { from: '2026-01-01T00:00:00.1' },
    });
    expect((await deep('page=14&per_page=20&q[s]=created_at asc'))!.skipped).toBe(250);
    expect(await deep('page=14&per_page=20&q[s]=title asc')).toBeUndefined(); // sorted in memory: every goal read
    expect((await deep('page=20&count=true'))!.skipped).toBeUndefined(); // counted from the start
  });
  it('a deep page newest first: the unsettled head counted on its keys, then the anchors from the newest settled bucket', async () => {
    // newest first; 00.3 is younger than SETTLE_MS at `now` (its count not trusted), the others settled
    const newest: Anchor[] = [
      { bucket: '2026-01-01T00:00:00.3', n: 40, nl: 0 },
      { bucket: '2026-01-01T00:00:00.2', n: 300, nl: 0 },
      { bucket: '2026-01-01T00:00:00.1', n: 100, nl: 1 },
      { bucket: '2026-01-01T00:00:00.0', n: 150, nl: 0 },
    ];
    const now = Date.parse('2026-01-01T00:00:00.350Z') + SETTLE_MS;
    const entry = (i: number, over: Partial<ListEntry> = {}): ListEntry => ({
      id: `g${i}`,
      sortKey: `2026-01-01T00:00:00.3${i}Z#g${i}`,
      vis: 'public',
      ...over,
    });
    // the head as the list holds it: 30 goals, and 2 deleted ones (their entries stay, marked discarded)
    const head = [...Array.from({ length: 30 }, (_, i) => entry(i)), entry(30, { state: 'discarded' }), entry(31, { state: 'discarded' })];
    const asked: Array<{ anchors?: { below: string }; recent?: [string, number] }> = [];
    const deep = (qs: string, opts: { seesAll?: boolean; recent?: ListEntry[] | undefined } = {}) =>
      planGoalList({ kind: 'objective', seesAll: Promise.resolve(opts.seesAll ?? true), listed: () => true }, query(qs), {
        stats: stats({}).read,
        known: 2,
        anchors: async (_skip, newestFirst) => {
          asked.push({ anchors: newestFirst! });
          return newestFirst ? newest : [...newest].reverse();
        },
        recent: async (since, atMost) => {
          asked.push({ recent: [since, atMost] });
          return 'recent' in opts ? opts.recent : head;
        },
        now,
      });
    const desc = '&q[s]=created_at desc';
    // skip 260: 30 in the head, then in 00.2 (300 goals); read backwards from the end of 00.2
    const p = (await deep(`page=14&per_page=20${desc}`))!;
    expect(p).toMatchObject({
      skipped: 30,
      served: [],
      source: { partitions: [`T#${T}#objective`], from: bucketEnd('2026-01-01T00:00:00.2') },
    });
    expect(asked).toEqual([{ anchors: { below: '2026-01-01T00:00:00.3' } }, { recent: ['2026-01-01T00:00:00.3', 260] }]);
    // skip 500: past 00.2 and 00.1 (30 + 300 + 100), in 00.0
    expect((await deep(`page=26&per_page=20${desc}`))!).toMatchObject({
      skipped: 430,
      source: { from: bucketEnd('2026-01-01T00:00:00.0') },
    });
    // a member: placed past buckets without limited goals only, and never past a limited goal of the head
    expect((await deep(`page=14&per_page=20${desc}`, { seesAll: false }))!.skipped).toBe(30);
    expect(await deep(`page=26&per_page=20${desc}`, { seesAll: false })).toBeUndefined();
    expect(await deep(`page=14&per_page=20${desc}`, { seesAll: false, recent: [...head, entry(40, { vis: 'limited' })] })).toBeUndefined();
    // an admin counts a limited goal of the head like any other; a deleted one is not counted
    expect((await deep(`page=14&per_page=20${desc}`, { recent: [...head, entry(40, { vis: 'limited' })] }))!.skipped).toBe(31);
    // the page lies within the head (more recent goals than it skips): walked from the newest
    expect(await deep(`page=14&per_page=20${desc}`, { recent: undefined })).toBeUndefined();
    // no head: placed by the anchors alone
    expect((await deep(`page=26&per_page=20${desc}`, { recent: [] }))!.skipped).toBe(400);
    // oldest first is unchanged: the anchors from the oldest, no head read
    asked.length = 0;
    expect((await deep('page=14&per_page=20'))!).toMatchObject({ skipped: 250, source: { from: bucketStart('2026-01-01T00:00:00.2') } });
    expect(asked).toEqual([{ anchors: undefined }]);
    expect((await deep(`page=14&per_page=20&count=true${desc}`))!.skipped).toBeUndefined(); // counted from the newest
  });
});

describe('page anchors', () => {
  const a = (bucket: string, n: number, nl = 0): Anchor => ({ bucket, n, nl });
  const anchors = [a('b1', 3), a('b2', 0), a('b3', 2, 1), a('b4', 5)];
  it('places a position in the bucket holding it, past the last anchor in the last bucket', () => {
    expect(placePage(anchors, 2, true, 'z')).toBeUndefined(); // in the first bucket: nothing to pass
    expect(placePage(anchors, 3, true, 'z')).toEqual({ bucket: 'b3', before: 3 }); // an emptied bucket is passed
    expect(placePage(anchors, 5, true, 'z')).toEqual({ bucket: 'b4', before: 5 });
    expect(placePage(anchors, 50, true, 'z')).toEqual({ bucket: 'b4', before: 5 }); // goals not counted yet: read on from the last
    expect(placePage(anchors, 4, false, 'z')).toEqual({ bucket: 'b3', before: 3 }); // no limited goal before it
    expect(placePage(anchors, 5, false, 'z')).toBeUndefined(); // b3's limited goal may be hidden from this caller
    expect(placePage([], 5, true, 'z')).toBeUndefined();
  });

  it('passes only settled buckets: a page reaching a younger one reads keys from it', () => {
    expect(placePage(anchors, 7, true, 'b3')).toEqual({ bucket: 'b3', before: 3 });
    expect(placePage(anchors, 7, true, 'b1')).toBeUndefined();
  });

  it('newest first: the head is counted first, then settled buckets from the newest; a page within the head is walked', () => {
    // newest first: b9 is unsettled (its goals are the head, counted on their keys), b8..b5 settled
    const newest = [a('b9', 4), a('b8', 3), a('b7', 0), a('b6', 2, 1), a('b5', 5)];
    expect(placePageNewestFirst(newest, 1, true, 'b9', 2)).toBeUndefined(); // within the head
    expect(placePageNewestFirst(newest, 2, true, 'b9', 2)).toEqual({ bucket: 'b8', before: 2 }); // the first settled goal
    expect(placePageNewestFirst(newest, 2, true, 'b9', 0)).toBeUndefined(); // no head, in the newest bucket: nothing to pass
    expect(placePageNewestFirst(newest, 5, true, 'b9', 2)).toEqual({ bucket: 'b6', before: 5 }); // an emptied bucket is passed
    expect(placePageNewestFirst(newest, 50, true, 'b9', 2)).toEqual({ bucket: 'b5', before: 7 }); // past the last anchor read
    expect(placePageNewestFirst(newest, 6, false, 'b9', 2)).toEqual({ bucket: 'b6', before: 5 }); // in the limited goal's bucket: walked from there
    expect(placePageNewestFirst(newest, 8, false, 'b9', 2)).toBeUndefined(); // past b6's limited goal
    expect(placePageNewestFirst([a('b9', 4)], 8, true, 'b9', 4)).toBeUndefined(); // nothing settled
  });

  it('buckets are a prefix of the list sort key', () => {
    const key = keys.listSortKey('2026-03-04T05:06:07.891Z', '55555555-5555-4555-8555-555555550000');
    const bucket = createdBucket('2026-03-04T05:06:07.891Z');
    expect(bucket).toBe('2026-03-04T05:06:07.8');
    expect(key >= bucketStart(bucket)).toBe(true);
    expect(keys.listSortKey('2026-03-04T05:06:07.799Z', 'x') < bucketStart(bucket)).toBe(true);
    expect(keys.listSortKey('2026-03-04T05:06:07.899Z', 'ffffffff-ffff-4fff-8fff-ffffffffffff') < bucketEnd(bucket)).toBe(true);
    expect(keys.listSortKey('2026-03-04T05:06:07.900Z', '00000000-0000-4000-8000-000000000000') > bucketEnd(bucket)).toBe(true);
  });
});
