import { describe, expect, it } from 'vitest';
import { goal, goalTenant, P } from './goals.fixture.ts';

/** Issue 8 section 3: concurrent parent changes never store a cycle, whatever the interleaving (many rounds). */
const ROUNDS = 20;

/** True when following parent links from any goal of `ids` leads back to it. */
async function hasCycle(get: (id: string) => Promise<string[]>, ids: string[]): Promise<boolean> {
  const parents = new Map(await Promise.all(ids.map(async (id) => [id, await get(id)] as const)));
  const onPath = (id: string, path: Set<string>): boolean => {
    if (path.has(id)) return true;
    return (parents.get(id) ?? []).some((p) => onPath(p, new Set([...path, id])));
  };
  return ids.some((id) => onPath(id, new Set()));
}

describe('hierarchy races', () => {
  // Any two of the three links make no cycle; all three do. A refusal ('cycle': the parent is below the goal) reads
  // the goal's descendants strongly, so it can only come from seeing the other two committed: exactly one is
  // refused, exactly two commit, whatever the interleaving (a conflict is retried, never answered).
  it('three concurrent re-parentings A under B, B under C, C under A: exactly two commit, the third is refused as a cycle', async () => {
    const { t, period } = await goalTenant();
    const parentsOf = async (id: string) =>
      ((await t.admin.get(P('objectives', id))).body.data.record.parent_links as Array<{ parent_uuid: string }>).map((l) => l.parent_uuid);
    for (let round = 0; round < ROUNDS; round++) {
      const [a, b, c] = await Promise.all(
        ['A', 'B', 'C'].map((title) => goal(t.admin, 'objectives', { title, time_period_uuid: period.uuid })),
      );
      const res = await Promise.all([
        t.admin.put(P('objectives', a.uuid), { parents: [b.uuid] }),
        t.admin.put(P('objectives', b.uuid), { parents: [c.uuid] }),
        t.admin.put(P('objectives', c.uuid), { parents: [a.uuid] }),
      ]);
      expect(res.map((r) => r.status).sort(), JSON.stringify(res.map((r) => r.body))).toEqual([200, 200, 422]);
      expect(res.find((r) => r.status === 422)!.body.error.details).toEqual([expect.objectContaining({ field: 'parents', code: 'cycle' })]);
      expect(await hasCycle(parentsOf, [a.uuid, b.uuid, c.uuid])).toBe(false);
    }
  });

  it('a link higher up the line, added concurrently, is seen: B under C exists; A under B and C under A race', async () => {
    const { t, period } = await goalTenant();
    const parentsOf = async (id: string) =>
      ((await t.admin.get(P('objectives', id))).body.data.record.parent_links as Array<{ parent_uuid: string }>).map((l) => l.parent_uuid);
    for (let round = 0; round < ROUNDS; round++) {
      const [a, c] = await Promise.all(['A', 'C'].map((title) => goal(t.admin, 'objectives', { title, time_period_uuid: period.uuid })));
      const b = await goal(t.admin, 'objectives', { title: 'B', time_period_uuid: period.uuid, parents: [c.uuid] });
      const res = await Promise.all([
        t.admin.put(P('objectives', a.uuid), { parents: [b.uuid] }),
        t.admin.put(P('objectives', c.uuid), { parents: [a.uuid] }),
      ]);
      // whichever commits first, the other's parent is then below its goal
      expect(res.map((r) => r.status).sort(), JSON.stringify(res.map((r) => r.body))).toEqual([200, 422]);
      expect(res.find((r) => r.status === 422)!.body.error.details).toEqual([expect.objectContaining({ field: 'parents', code: 'cycle' })]);
      expect(await hasCycle(parentsOf, [a.uuid, b.uuid, c.uuid])).toBe(false);
    }
  });
});
