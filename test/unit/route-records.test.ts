import { describe, expect, it } from 'vitest';
import { GOAL_KINDS, PATH_BY_KIND } from '#shared/domain/goals/entity.ts';
import { goalKindOf, historyGoalKindOf } from '#shared/routes/goal-kinds.ts';
import { goalRoutes } from '#shared/routes/goals.ts';
import { historyRoutes } from '#shared/routes/history.ts';

/** Shared handlers learn their record kind from their route row, not from parsing the path. */
describe('route rows name their record kind', () => {
  it('every goal and history row names the kind whose path it serves', () => {
    for (const [rows, kindOf] of [
      [goalRoutes, goalKindOf],
      [historyRoutes, historyGoalKindOf],
    ] as const) {
      for (const kind of GOAL_KINDS) {
        const mine = rows.filter((r) => r.path.startsWith(`/rest/v2/${PATH_BY_KIND[kind]}`));
        expect(mine.length).toBeGreaterThan(0);
        for (const r of mine) expect(kindOf(`${r.method} ${r.path}`)).toBe(kind);
      }
    }
  });

  it('a route key outside the rows is a wiring mistake, not a guess', () => {
    expect(() => goalKindOf('GET /rest/v2/teams')).toThrow(/no record kind/);
    expect(() => historyGoalKindOf('GET /rest/v2/objectives/{id}')).toThrow(/no record kind/);
  });
});
