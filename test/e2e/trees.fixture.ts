import { expect } from 'vitest';
import type { Res } from '../support/api.ts';

/** Race tests run many rounds; on a loaded machine they take minutes. */
export const RACE_TIMEOUT_MS = 300_000;

/**
 * One round of the three-way cycle race on a tree (team parents, label groups, managers): a under b, b under
 * c and c under a are sent at once. Each answers 200 or 422, at most two commit, and following the stored
 * links from any of the three never comes back to where it started.
 */
export async function raceThreeWayCycle(
  ids: [string, string, string],
  place: (child: string, parent: string) => Promise<Res>,
  parentOf: (id: string) => Promise<string | null>,
  round: number,
): Promise<void> {
  const [a, b, c] = ids;
  const results = await Promise.all([place(a, b), place(b, c), place(c, a)]);
  for (const r of results) expect([200, 422], JSON.stringify(r.body)).toContain(r.status);
  expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(2);
  const parents = new Map(await Promise.all(ids.map(async (id) => [id, await parentOf(id)] as const)));
  for (const start of ids) {
    const seen = new Set<string>();
    for (let at: string | null | undefined = start; at; at = parents.get(at)) {
      expect(seen.has(at), `cycle in round ${round}`).toBe(false);
      seen.add(at);
    }
  }
}
