import { beforeAll, describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { getEntity, WriteTx, type DataCtx } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { listGoals } from '#shared/domain/goals/list.ts';
import { presentGoals } from '#shared/domain/goals/present.ts';
import { getGoal } from '#shared/domain/goals/service.ts';
import { callerTeamUuids } from '#shared/auth/caller.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { Loader } from '#shared/list/loader.ts';
import { logger } from '#shared/logger.ts';
import { type TenantFixture } from '../support/api.ts';
import { createPeriod, goal, goalTenant, P, type GoalTenant } from './goals.fixture.ts';

/**
 * Data access with 10,000 goals of one kind: gets, pages and indexed filters read (about) only what they
 * return. Counted at the DynamoDB client: full items read (GetItem, BatchGetItem) apart from index keys
 * (Query), and no Scan ever.
 */
const N = 10_000;

interface Counts {
  items: number;
  queries: number;
  keys: number;
  scans: number;
}

function countingCtx(fixture: TenantFixture, user: Awaited<ReturnType<typeof getEntity<any>>>): { ctx: DomainCtx; counts: Counts } {
  const counts: Counts = { items: 0, queries: 0, keys: 0, scans: 0 };
  const db = baseDb();
  const counted = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: { constructor: { name: string } }) => {
        const out = (await target.send(command as never)) as Record<string, any>;
        const name = command.constructor.name;
        if (name === 'GetCommand') counts.items += out.Item ? 1 : 0;
        else if (name === 'BatchGetCommand') counts.items += Object.values(out.Responses ?? {}).reduce((n: number, items: any) => n + items.length, 0);
        else if (name === 'QueryCommand') {
          counts.queries += 1;
          counts.keys += out.ScannedCount ?? 0;
        } else if (name === 'ScanCommand') counts.scans += 1;
        return out;
      };
    },
  });
  const data: DataCtx = { tenantId: fixture.tenantUuid, db: counted };
  const record = user!.record;
  let teams: Promise<Set<string>> | undefined;
  const ctx: DomainCtx = { ...data, caller: { tenantId: fixture.tenantUuid, userId: record.uuid, role: record.role, user: record }, loader: new Loader(data), log: logger, requestId: 'test', teams: () => (teams ??= callerTeamUuids(data, record.uuid)) };
  return { ctx, counts };
}

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
  const asAdmin = async () => countingCtx(t, await getEntity({ tenantId: t.tenantUuid, db: baseDb() }, userEntity, t.adminUuid));
  const asMember = async () => countingCtx(t, await getEntity({ tenantId: t.tenantUuid, db: baseDb() }, userEntity, member.uuid));

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
    const batches: GoalRecord[][] = [];
    for (let i = 0; i < seeded.length; i += 20) batches.push(seeded.slice(i, i + 20));
    const write = async (batch: GoalRecord[]) => {
      const tx = new WriteTx(data);
      for (const r of batch) tx.create(goalEntity, r);
      await tx.commit();
    };
    for (let i = 0; i < batches.length; i += 16) await Promise.all(batches.slice(i, i + 16).map(write));
  }, 600_000);

  it('a get reads the goal item once (plus the caller’s teams for a member)', async () => {
    const { ctx, counts } = await asAdmin();
    const view = await getGoal(ctx, 'objective', seeded[4321]!.uuid);
    await presentGoals(ctx.loader, [view.goal]);
    expect(counts).toEqual({ items: 1, queries: 0, keys: 0, scans: 0 });
    const m = await asMember();
    await getGoal(m.ctx, 'objective', seeded[4320]!.uuid);
    expect(m.counts.items).toBe(1);
    expect(m.counts.queries).toBe(1); // the member's teams
  });

  const page = async (who: 'admin' | 'member', query: string) => {
    const { ctx, counts } = who === 'admin' ? await asAdmin() : await asMember();
    const pairs = [...new URLSearchParams(query)];
    const result = await listGoals(ctx, 'objective', pairs);
    await presentGoals(ctx.loader, result.records);
    expect(counts.scans).toBe(0);
    return { result, counts };
  };

  it('an unfiltered page reads only its items, on page 1 and on page 50, for admins and members', async () => {
    for (const [who, n] of [['admin', 1], ['admin', 50], ['member', 1], ['member', 50]] as const) {
      const { result, counts } = await page(who, `page=${n}&per_page=20`);
      expect(result.records).toHaveLength(20);
      expect(counts.items).toBeLessThanOrEqual(21); // the page (+ a label)
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
        expect(counts.items, `${query} page ${n}: read ${counts.items} items for ${result.records.length}`).toBeLessThanOrEqual(2 * Math.max(result.records.length, 1) + 2);
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
