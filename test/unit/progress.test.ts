import { describe, expect, it } from 'vitest';
import type { GoalRecord, MetricRecord, MetricType } from '#shared/domain/goals/entity.ts';
import {
  aggregateOf,
  aggregateProgress,
  goalProgressAt,
  metricProgress,
  planRollupWrites,
  type RollupState,
} from '#shared/domain/goals/progress.ts';

/** Weighted average of the children's progress towards `parentUuid` (null children count as 0), or null when no child counts. */
const rollupProgress = (parentUuid: string, children: GoalRecord[]) => aggregateProgress(aggregateOf(parentUuid, children));

/** The new `current_progress` of every rollup goal that moves when `start` changed (planRollupWrites, progress only). */
function planRollups(state: RollupState, start: string[]): Map<string, number | null> {
  const out = new Map<string, number | null>();
  for (const [id, w] of planRollupWrites(state, start)) if (w.progress !== state.goals.get(id)!.current_progress) out.set(id, w.progress);
  return out;
}

const metric = (metric_type: MetricType, start_value: number, target_value: number): MetricRecord => ({
  uuid: 'm',
  name: 'm',
  start_value,
  target_value,
  unit: null,
  metric_type,
});

describe('metricProgress', () => {
  it('is null without a value', () => {
    for (const t of ['reach', 'stay_above', 'stay_below', 'stay_between'] as const)
      expect(metricProgress(metric(t, 0, 10), null)).toBeNull();
  });

  it('reach: linear from start to target, clamped to 0..100', () => {
    const m = metric('reach', 0, 10);
    expect(metricProgress(m, 0)).toBe(0);
    expect(metricProgress(m, 7)).toBe(70); // no float noise (0.7 * 100)
    expect(metricProgress(m, 10)).toBe(100);
    expect(metricProgress(m, 15)).toBe(100);
    expect(metricProgress(m, -3)).toBe(0);
    expect(metricProgress(metric('reach', 20, 50), 30)).toBe(33.33);
    expect(metricProgress(metric('reach', 1, 4), 2)).toBe(33.33);
  });

  it('reach: works for decreasing targets', () => {
    const m = metric('reach', 100, 20); // e.g. cut churn from 100 to 20
    expect(metricProgress(m, 100)).toBe(0);
    expect(metricProgress(m, 60)).toBe(50);
    expect(metricProgress(m, 40)).toBe(75);
    expect(metricProgress(m, 20)).toBe(100);
    expect(metricProgress(m, 5)).toBe(100);
    expect(metricProgress(m, 120)).toBe(0);
  });

  it('reach: a degenerate metric (target = start) is reached at or past the target', () => {
    expect(metricProgress(metric('reach', 5, 5), 4)).toBe(0);
    expect(metricProgress(metric('reach', 5, 5), 5)).toBe(100);
  });

  it('stay_above: 100 while value >= target', () => {
    const m = metric('stay_above', 0, 95);
    expect(metricProgress(m, 95)).toBe(100);
    expect(metricProgress(m, 99.9)).toBe(100);
    expect(metricProgress(m, 94.99)).toBe(0);
  });

  it('stay_below: 100 while value <= target', () => {
    const m = metric('stay_below', 0, 3);
    expect(metricProgress(m, 3)).toBe(100);
    expect(metricProgress(m, -1)).toBe(100);
    expect(metricProgress(m, 3.01)).toBe(0);
  });

  it('stay_between: 100 while start <= value <= target (bounds included)', () => {
    const m = metric('stay_between', 10, 20);
    expect(metricProgress(m, 10)).toBe(100);
    expect(metricProgress(m, 15)).toBe(100);
    expect(metricProgress(m, 20)).toBe(100);
    expect(metricProgress(m, 9.99)).toBe(0);
    expect(metricProgress(m, 20.01)).toBe(0);
    expect(metricProgress(metric('stay_between', 20, 10), 15)).toBe(100); // band written the other way round
  });

  it('a goal without a metric reads the value as a percentage', () => {
    expect(goalProgressAt({ metric: null }, 42)).toBe(42);
    expect(goalProgressAt({ metric: null }, 142)).toBe(100);
    expect(goalProgressAt({ metric: null }, null)).toBeNull();
    expect(goalProgressAt({ metric: metric('reach', 0, 200) }, 50)).toBe(25);
  });
});

describe('rollupProgress', () => {
  const child = (progress: number | null, contribution: number, extra: Partial<GoalRecord> = {}) =>
    ({
      uuid: crypto.randomUUID(),
      current_progress: progress,
      parent_links: [{ parent_uuid: 'P', contribution_percent: contribution }],
      discarded_at: null,
      archived_at: null,
      ...extra,
    }) as GoalRecord;

  it('averages children weighted by their contribution to this parent', () => {
    expect(rollupProgress('P', [child(100, 100), child(0, 100)])).toBe(50);
    expect(rollupProgress('P', [child(100, 75), child(0, 25)])).toBe(75);
    expect(rollupProgress('P', [child(40, 50), child(70, 100), child(10, 50)])).toBe(47.5);
  });

  it('counts a child without progress as 0 and leaves out discarded and archived children', () => {
    expect(rollupProgress('P', [child(80, 100), child(null, 100)])).toBe(40);
    expect(
      rollupProgress('P', [
        child(80, 100),
        child(0, 100, { discarded_at: '2024-01-01T00:00:00Z' }),
        child(0, 100, { archived_at: '2024-01-01T00:00:00Z' }),
      ]),
    ).toBe(80);
  });

  it('uses the link to this parent only, ignores zero weights and stale children; null when nothing counts', () => {
    const twoParents = child(60, 10, {
      parent_links: [
        { parent_uuid: 'Q', contribution_percent: 100 },
        { parent_uuid: 'P', contribution_percent: 10 },
      ],
    });
    expect(rollupProgress('P', [twoParents, child(0, 30)])).toBe(15);
    expect(rollupProgress('P', [child(50, 0)])).toBeNull();
    expect(rollupProgress('P', [child(50, 100, { parent_links: [] })])).toBeNull();
    expect(rollupProgress('P', [])).toBeNull();
  });
});

describe('planRollups (pure)', () => {
  const g = (uuid: string, mode: 'manual' | 'rollup', progress: number | null, parents: string[] = []) =>
    ({
      uuid,
      progress_mode: mode,
      current_progress: progress,
      parent_links: parents.map((p) => ({ parent_uuid: p, contribution_percent: 100 })),
      discarded_at: null,
      archived_at: null,
    }) as unknown as GoalRecord;

  it('recomputes a lattice children first, each goal once, and only goals that move', () => {
    // two levels of two rollup goals above two leaves, every goal linked to both goals above it
    const goals = new Map([
      ['a', g('a', 'manual', 50, ['m1', 'm2'])],
      ['b', g('b', 'manual', 0, ['m1', 'm2'])],
      ['m1', g('m1', 'rollup', 0, ['t1', 't2'])],
      ['m2', g('m2', 'rollup', 0, ['t1', 't2'])],
      ['t1', g('t1', 'rollup', 0)],
      ['t2', g('t2', 'rollup', 25)],
    ]);
    const childrenOf = new Map([
      ['m1', ['a', 'b']],
      ['m2', ['a', 'b']],
      ['t1', ['m1', 'm2']],
      ['t2', ['m1', 'm2']],
    ]);
    expect(planRollups({ goals, childrenOf }, ['a'])).toEqual(
      new Map([
        ['m1', 25],
        ['m2', 25],
        ['t1', 25],
      ]),
    );
  });

  it('stops where progress does not move, and survives a (never stored) cycle', () => {
    const goals = new Map([
      ['x', g('x', 'rollup', 10, ['y'])],
      ['y', g('y', 'rollup', 10, ['x'])],
      ['c', g('c', 'manual', 10, ['x'])],
    ]);
    expect(
      planRollups(
        {
          goals,
          childrenOf: new Map([
            ['x', ['c', 'y']],
            ['y', ['x']],
          ]),
        },
        ['c'],
      ),
    ).toEqual(new Map());
    const chain = new Map([
      ['l', g('l', 'manual', 10, ['p'])],
      ['p', g('p', 'rollup', 10, ['q'])],
      ['q', g('q', 'rollup', 0)],
    ]);
    const childrenOf = new Map([
      ['p', ['l']],
      ['q', ['p']],
    ]);
    // p already shows its child's 10: nothing above it is recomputed (q's stale 0 is not this write's to fix)
    expect(planRollups({ goals: chain, childrenOf }, ['l'])).toEqual(new Map());
    chain.set('l', g('l', 'manual', 30, ['p']));
    expect(planRollups({ goals: chain, childrenOf }, ['l'])).toEqual(
      new Map([
        ['p', 30],
        ['q', 30],
      ]),
    );
  });
});
