import type { MetricName } from '#shared/observability/metrics.ts';

/**
 * Emits service metrics (shared/observability/metrics.ts: the catalogue, the Metrics instance, publishing).
 * That module, and Powertools Metrics with it, is loaded on the first emission rather than at cold start: most
 * invocations emit nothing (a 429, a replay, a failed delivery are rare), and those that do pay the load once.
 * Awaited by the caller, so the line is written before the invocation ends. Never rejects.
 */
export async function emitMetrics(values: Partial<Record<MetricName, number | readonly number[] | undefined>>): Promise<void> {
  if (!Object.values(values).some((v) => v !== undefined && (typeof v === 'number' || v.length > 0))) return; // nothing to load the module for
  try {
    (await import('#shared/observability/metrics.ts')).publishMetrics(values);
  } catch {
    // a metric never fails the work that emits it
  }
}

/** One data point of one metric (default 1: a count). */
export const emitMetric = (name: MetricName, value = 1): Promise<void> => emitMetrics({ [name]: value });
