import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { goalEntity, type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { dim } from '#shared/read-models/goal-entries.ts';
import { readGoalStats } from '#shared/read-models/goal-sync.ts';
import { eventually } from '../support/eventually.ts';
import { goal, goalApi, goalTenant, P, uuids, writeGoals } from './goals.fixture.ts';

/**
 * Deep pages newest first (`q[s]=created_at desc`) placed by the page anchors (shared/domain/goals/list-plan.ts,
 * page-anchors.ts): the goals of the last SETTLE_MS are counted on the list's keys, older ones by their anchors.
 * The oldest-first counterpart is in read-models.test.ts.
 */
describe('page anchors, newest first', () => {
  it('a deep page newest first starts at its page anchor once the anchors are settled, and is right for admins and members', async () => {
    const { t, period } = await goalTenant();
    const data: DataCtx = { tenantId: t.tenantUuid, db: baseDb() };
    const made = await goal(t.admin, 'objectives', { title: 'template', time_period_uuid: period.uuid });
    const template = (await getEntity(data, goalEntity, made.uuid))!.record;
    // 340 goals created long ago (settled buckets), ten per tenth of a second; one limited, among the oldest
    const old = goalsAt(template, 'objective', Date.parse('2025-01-01T00:00:00.000Z'), 340, (i) =>
      i === 7 ? { visibility: 'limited' } : {},
    );
    await writeGoals(data, old);
    const newestFirst = [made.uuid, ...old.map((g) => g.uuid).reverse()]; // the template was created now: first
    await settledCount(data, 'objective', newestFirst.length);
    const page = (api: typeof t.admin, n: number, kind: 'objectives' | 'key_results' = 'objectives') =>
      api.get(`${P(kind)}?page=${n}&per_page=20&q[s]=created_at%20desc`);
    for (const n of [11, 13, 17, 18]) {
      const res = await page(t.admin, n);
      expect(uuids(res.body.data.records), `page ${n}`).toEqual(newestFirst.slice((n - 1) * 20, n * 20));
      expect(res.body.data.pagy.next).toBe(n < 18 ? n + 1 : null);
      expect(Number(res.headers.get('x-db-items-read'))).toBeLessThan((n - 1) * 20); // fewer than the keys it skips
    }

    // a member: placed by the anchors past buckets without a limited goal; the limited one (7th oldest) is in the
    // bucket page 17 starts in or beyond, which the engine walks and judges on the keys
    const member = await t.user();
    const seen = newestFirst.filter((id) => id !== old[7]!.uuid);
    const m13 = await page(member.api, 13);
    expect(uuids(m13.body.data.records)).toEqual(seen.slice(240, 260));
    expect(Number(m13.headers.get('x-db-items-read'))).toBeLessThan(240);
    const m17 = await page(member.api, 17);
    expect(uuids(m17.body.data.records)).toEqual(seen.slice(320, 340));
    expect(m17.body.data.pagy.next).toBeNull();

    // a goal near the newest end made limited: the member's pages are right once the stream has counted it
    // (until then they may start one record off: page-anchors.ts), the admin's at once
    await goalApi(t.admin).update('objectives', old[335]!.uuid, { visibility: 'limited' });
    expect(uuids((await page(t.admin, 13)).body.data.records)).toEqual(newestFirst.slice(240, 260));
    const seenNow = seen.filter((id) => id !== old[335]!.uuid);
    await eventually(async () => expect(uuids((await page(member.api, 13)).body.data.records)).toEqual(seenNow.slice(240, 260)));
    // a delete before the page is counted once the stream has synced it
    await goalApi(t.admin).remove('objectives', old[300]!.uuid);
    const left = newestFirst.filter((id) => id !== old[300]!.uuid);
    await eventually(async () => expect(uuids((await page(t.admin, 13)).body.data.records)).toEqual(left.slice(240, 260)));
    // another order is sorted in memory over every goal: never placed by the anchors
    const titles = new Map([...old.map((g) => [g.uuid, g.title] as const), [made.uuid, 'template']]);
    const byTitle = [...left].sort((a, b) => titles.get(b)!.localeCompare(titles.get(a)!));
    expect(uuids((await t.admin.get(`${P('objectives')}?page=13&per_page=20&q[s]=title%20desc`)).body.data.records)).toEqual(
      byTitle.slice(240, 260),
    );

    // goals created a moment ago are in unsettled buckets: counted on their keys, so a deep page is right at once,
    // whatever the stream has counted of them; a deleted one is not counted, a limited one makes a member walk
    const oldKrs = goalsAt(template, 'key_result', Date.parse('2025-02-01T00:00:00.000Z'), 300);
    await writeGoals(data, oldKrs);
    await settledCount(data, 'key_result', oldKrs.length);
    const fresh = goalsAt(
      template,
      'key_result',
      Date.now() - 1_000,
      40,
      (i) => (i === 10 ? { discarded_at: new Date().toISOString() } : i === 5 ? { visibility: 'limited' } : {}),
      1,
    );
    await writeGoals(data, fresh);
    const expected = [...oldKrs, ...fresh.filter((_, i) => i !== 10)].map((g) => g.uuid).reverse();
    const admin13 = await page(t.admin, 13, 'key_results');
    expect(uuids(admin13.body.data.records)).toEqual(expected.slice(240, 260));
    expect(Number(admin13.headers.get('x-db-items-read'))).toBeLessThan(240);
    const memberExpected = expected.filter((id) => id !== fresh[5]!.uuid);
    expect(uuids((await page(member.api, 13, 'key_results')).body.data.records)).toEqual(memberExpected.slice(240, 260));
    expect(uuids((await page(t.admin, 3, 'key_results')).body.data.records)).toEqual(expected.slice(40, 60)); // a shallow page: walked
  });
});

/** `count` goals of `kind` like `template`, created `step` ms apart from `start` (ten to a tenth of a second at 10 ms). */
function goalsAt(
  template: GoalRecord,
  kind: GoalKind,
  start: number,
  count: number,
  over: (i: number) => Partial<GoalRecord> = () => ({}),
  step = 10,
): GoalRecord[] {
  return Array.from({ length: count }, (_, i) => {
    const at = new Date(start + i * step).toISOString();
    const uuid = randomUUID();
    return {
      ...template,
      uuid,
      path: uuid,
      type: kind,
      title: `${kind} ${i}`,
      created_at: at,
      updated_at: at,
      visibility: 'public',
      ...over(i),
    };
  });
}

/** Waits for the stream to count `n` goals of the kind (the page anchors are counted with them). */
async function settledCount(data: DataCtx, kind: GoalKind, n: number) {
  await eventually(async () => expect((await readGoalStats(data, kind, [dim.all])).count(dim.all).n).toBe(n));
}
