import { describe, expect, it } from 'vitest';
import type { GoalRecord, MetricRecord, MetricType } from '#shared/domain/goals/entity.ts';
import { goalProgressAt, metricProgress, rollupProgress } from '#shared/domain/goals/progress.ts';

const metric = (metric_type: MetricType, start_value: number, target_value: number): MetricRecord => ({ uuid: 'm', name: 'm', start_value, target_value, unit: null, metric_type });

describe('metricProgress', () => {
  it('is null without a value', () => {
    for (const t of ['reach', 'stay_above', 'stay_below', 'stay_between'] as const) expect(metricProgress(metric(t, 0, 10), null)).toBeNull();
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
    ({ uuid: crypto.randomUUID(), current_progress: progress, parent_links: [{ parent_uuid: 'P', contribution_percent: contribution }], discarded_at: null, archived_at: null, ...extra }) as GoalRecord;

  it('averages children weighted by their contribution to this parent', () => {
    expect(rollupProgress('P', [child(100, 100), child(0, 100)])).toBe(50);
    expect(rollupProgress('P', [child(100, 75), child(0, 25)])).toBe(75);
    expect(rollupProgress('P', [child(40, 50), child(70, 100), child(10, 50)])).toBe(47.5);
  });

  it('counts a child without progress as 0 and leaves out discarded and archived children', () => {
    expect(rollupProgress('P', [child(80, 100), child(null, 100)])).toBe(40);
    expect(rollupProgress('P', [child(80, 100), child(0, 100, { discarded_at: '2024-01-01T00:00:00Z' }), child(0, 100, { archived_at: '2024-01-01T00:00:00Z' })])).toBe(80);
  });

  it('uses the link to this parent only, ignores zero weights and stale children; null when nothing counts', () => {
    const twoParents = child(60, 10, { parent_links: [{ parent_uuid: 'Q', contribution_percent: 100 }, { parent_uuid: 'P', contribution_percent: 10 }] });
    expect(rollupProgress('P', [twoParents, child(0, 30)])).toBe(15);
    expect(rollupProgress('P', [child(50, 0)])).toBeNull();
    expect(rollupProgress('P', [child(50, 100, { parent_links: [] })])).toBeNull();
    expect(rollupProgress('P', [])).toBeNull();
  });
});
