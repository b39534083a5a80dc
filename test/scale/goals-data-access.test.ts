import { beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { getEntity } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { listGoals } from '#shared/domain/goals/list.ts';
import { presentGoals } from '#shared/presenters/goals.ts';
import { getGoal } from '#shared/domain/goals/service.ts';
import type { TenantFixture } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';
import { pacedByStream } from '../support/paced-seed.ts';
import { dim } from '#shared/read-models/goal-entries.ts';
import { readGoalStats } from '#shared/read-models/goal-sync.ts';
import { countingCtx, createPeriod, goal, goalTenant, P, type GoalTenant } from '../e2e/goals.fixture.ts';

/**
 * Data access with 10,000 goals of one kind: gets, pages and indexed filters read (about) only what they
 * return. Counted at the DynamoDB client: full items read (GetItem, BatchGetItem) apart from index keys
 * (Query), and no Scan ever.
 *
 * In the scale lane (run after the main suite, scripts/dev test), one file at a time: the seed is written straight
 * into the table, paced by the change stream (test/support/paced-seed.ts) so the stream stays within the 30 s lag
 * bound of every lane.
 */
const N = 10_000;

describe('goals: data access with 10,000 goals', () => {
  let g: GoalTenant;
  let t: TenantFixture;
  let member: Awaited<ReturnType<TenantFixture['user']>>;
  let owner: Awaited<ReturnType<TenantFixture['user']>>;
  let q2: GoalTenant['period'];
  let team: any;
  let labelUuid: string;
  let root: any;
  const seeded: GoalRecord[] = [];
  const asAdmin = () => countingCtx(t, t.adminUuid);
  const asMember = () => countingCtx(t, member.uuid);

  beforeAll(async () => {
    g = await goalTenant();
    t = g.t;
    [member, owner] = await Promise.all([t.user(), t.user()]);
    q2 = await createPeriod(t.admin, 'Q2', '2025-04-01', '2025-06-30');
    team = (await t.admin.post('/rest/v2/teams', { name: 'Seeded team' })).body.data.record;
    root = await goal(t.admin, 'objectives', { title: 'Root', time_period_uuid: g.period.uuid, labels: ['Seeded'] });
    labelUuid = root.labels[0].uuid;
    const data = { tenantId: t.tenantUuid, db: baseDb() };
    const template = (await getEntity(data, goalEntity, root.uuid))!.record;

    // Every 100th goal has the owner, the label, the team; every 50th is in Q2; the first 100 are children
    // of root and the next 100 their children; one in five is limited (invisible to the member).
    const start = Date.parse(template.created_at);
    for (let i = 0; i < N; i++) {
      const uuid = crypto.randomUUID();
      const at = new Date(start + 1000 + i).toISOString();
      const parent = i < 100 ? root.uuid : i < 200 ? seeded[i - 100]!.uuid : null;
      seeded.push({
        ...template,
        uuid,
        title: `Seeded ${i}`,
        searchable_content: `seeded ${i}`,
        created_at: at,
        updated_at: at,
        time_period_uuid: i % 50 === 7 ? q2.uuid : g.period.uuid,
        start_date: i % 50 === 7 ? q2.start_date : g.period.start_date,
        end_date: i % 50 === 7 ? q2.end_date : g.period.end_date,
        owner_uuids: i % 100 === 3 ? [owner.uuid] : [],
        label_uuids: i % 100 === 5 ? [labelUuid] : [],
        team_uuids: i % 100 === 9 ? [team.uuid] : [],
        parent_links: parent ? [{ parent_uuid: parent, contribution_percent: 100 }] : [],
        path: parent ? `${root.uuid}/${uuid}` : uuid,
        visibility: i % 5 === 1 ? 'limited' : 'public',
      });
    }
    const write = async (batch: GoalRecord[]) => {
      const tx = new WriteTx(data);
      for (const r of batch) tx.create(goalEntity, r);
      await tx.commit();
    };
    // a chunk at a time, each applied by the stream before the next (derived state included), 20 goals a transaction
    await pacedByStream(seeded, async (chunk) => {
      const batches: GoalRecord[][] = [];
      for (let i = 0; i < chunk.length; i += 20) batches.push(chunk.slice(i, i + 20));
      for (let i = 0; i < batches.length; i += 16) await Promise.all(batches.slice(i, i + 16).map(write));
    });
  }, 600_000);

  it('a get reads the goal item once (plus, for a member, the goal’s teams by key when it names any)', async () => {
    const { ctx, counts } = await asAdmin();
    const view = await getGoal(ctx, 'objective', seeded[4321]!.uuid);
    await presentGoals(ctx, [view.goal]);
    expect(counts).toEqual({ items: 1, queries: 0, keys: 0, scans: 0 });
    const m = await asMember();
    await getGoal(m.ctx, 'objective', seeded[4320]!.uuid);
    expect(m.counts.items).toBe(1);
    expect(m.counts.queries).toBe(0); // a public goal without teams: the member's teams decide nothing
    const withTeam = await asMember();
    await getGoal(withTeam.ctx, 'objective', seeded[4309]!.uuid);
    // its team read by key (a team owner made a moment ago may edit), not the member's lagging team list
    expect(withTeam.counts).toEqual({ items: 2, queries: 0, keys: 0, scans: 0 });
  });

  const page = async (who: 'admin' | 'member', query: string) => {
    const { ctx, counts } = who === 'admin' ? await asAdmin() : await asMember();
    const pairs = [...new URLSearchParams(query)];
    const result = await listGoals(ctx, 'objective', pairs);
    await presentGoals(ctx, result.records);
    expect(counts.scans).toBe(0);
    return { result, counts };
  };

  it('an unfiltered page reads only its items, on page 1 and on page 50, for admins and members', async () => {
    // a deep page passes settled page anchors (built and kept by the change stream, which the seed was paced by); once they count every goal:
    await eventually(async () =>
      expect((await readGoalStats({ tenantId: t.tenantUuid, db: baseDb() }, 'objective', [dim.all])).count(dim.all).n).toBe(N + 1),
    );
    for (const [who, n] of [
      ['admin', 1],
      ['admin', 50],
      ['member', 1],
      ['member', 50],
    ] as const) {
      const { result, counts } = await page(who, `page=${n}&per_page=20`);
      expect(result.records).toHaveLength(20);
      expect(counts.items).toBeLessThanOrEqual(21); // the page (+ a label, or the read models' readiness on page 50)
      if (who === 'member') expect(result.records.every((r) => r.visibility === 'public')).toBe(true);
    }
    const { result } = await page('admin', 'page=50&per_page=20');
    expect(result.records[0]!.title).toBe(`Seeded ${49 * 20 - 1}`); // root is first
  });

  it('indexed filters read at most about twice what they return', async () => {
    const cases: Array<[string, (r: GoalRecord) => boolean]> = [
      [`q[owners_uuid_eq]=${owner.uuid}`, (r) => r.owner_uuids.includes(owner.uuid)],
      [`q[labels_uuid_eq]=${labelUuid}`, (r) => r.label_uuids.includes(labelUuid)],
      ['q[labels_name_eq]=seeded', (r) => r.label_uuids.includes(labelUuid)],
      [`q[teams_uuid_eq]=${team.uuid}`, (r) => r.team_uuids.includes(team.uuid)],
      [`q[time_period_uuid_eq]=${q2.uuid}`, (r) => r.time_period_uuid === q2.uuid],
      [`q[links_as_child_ancestor_uuid_eq]=${root.uuid}`, (r) => r.parent_links[0]?.parent_uuid === root.uuid],
      [`q[ancestors_uuid_eq]=${root.uuid}`, (r) => !!r.parent_links.length],
      [`q[uuid_in]=${seeded[10]!.uuid},${seeded[9999]!.uuid}`, () => true],
    ];
    for (const [query, matches] of cases) {
      for (const n of [1, 2]) {
        const { result, counts } = await page('admin', `${query}&page=${n}&per_page=20`);
        if (n === 1) expect(result.records.length, query).toBeGreaterThan(0);
        expect(result.records.every(matches), query).toBe(true);
        expect(counts.items, `${query} page ${n}: read ${counts.items} items for ${result.records.length}`).toBeLessThanOrEqual(
          2 * Math.max(result.records.length, 1) + 2,
        );
      }
    }
    // An indexed filter plus a filter checked on items: the engine reads candidates of the index in batches
    // of 100 (shared/list/engine.ts), so a page of 20 reads one batch, never the whole tenant.
    const mixed = await page('admin', `q[owners_uuid_eq]=${owner.uuid}&q[title_cont]=seeded&per_page=20`);
    expect(mixed.result.records).toHaveLength(20);
    expect(mixed.counts.items).toBeLessThanOrEqual(100 + 2);
    const all = await page('admin', `q[ancestors_uuid_eq]=${root.uuid}&per_page=100&page=2`);
    expect(all.result.records).toHaveLength(100); // 200 descendants in two levels
    expect(all.result.pagy.next).toBeNull();
  });

  it('the HTTP list answers with the same page', async () => {
    const res = await t.admin.get(`${P('objectives')}?page=3&per_page=5`);
    expect(res.body.data.records.map((r: { title: string }) => r.title)).toEqual([9, 10, 11, 12, 13].map((i) => `Seeded ${i}`));
  });
});
