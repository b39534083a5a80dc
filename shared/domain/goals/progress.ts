import type { DomainCtx } from '#shared/domain/context.ts';
import type { MetricRecord } from '#shared/domain/goals/entity.ts';

/**
 * Metric math and rollup (contract section 6). OWNED BY THE CHECK-INS WORK: goals code only calls these.
 */

/** Progress 0-100 of a metric at `value` (null when there is no value). */
export function metricProgress(metric: MetricRecord, value: number | null): number | null {
  void metric;
  void value;
  throw new Error('not implemented yet');
}

/**
 * Brings every `progress_mode = rollup` ancestor of the given goals up to date, nearest first, before
 * returning. Call after any write that changes a goal's progress, its parent links, its contribution,
 * its discarded/archived state, or its progress_mode.
 */
export async function refreshRollups(ctx: DomainCtx, goalUuids: string[]): Promise<void> {
  void ctx;
  void goalUuids;
}
