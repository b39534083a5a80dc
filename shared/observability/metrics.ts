import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * The service's own CloudWatch metrics (Powertools Metrics, embedded metric format): the one place that owns
 * the Metrics instance, the namespace, the catalogue of metric names and their publishing. Nothing else imports
 * `@aws-lambda-powertools/metrics`. Code emits through `emitMetric(s)` (shared/observability/emit.ts), which
 * loads this module on first use: Powertools Metrics is not part of any function's cold start.
 *
 * Each emission is published at once (one EMF log line), not buffered until the end of the invocation: the local
 * stack runs many requests in one process against this one instance, and an add-then-publish with no await
 * between them cannot mix two requests' metrics; nor can a metric be lost to a handler path that forgets to
 * flush. Every metric carries only the default `service` dimension (POWERTOOLS_SERVICE_NAME).
 *
 * Locally the lines are off: the local stack and the test configs set POWERTOOLS_METRICS_DISABLED=true
 * (an operator may set it to false to see them); in Lambda nothing sets it, so they are on.
 */

export const METRICS_NAMESPACE = 'GoalTracking';
export const METRICS_SERVICE = process.env.POWERTOOLS_SERVICE_NAME ?? 'goal-tracking';

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

interface MetricSpec {
  unit: Unit;
  /** The statistic the dashboard shows (infra/constructs/dashboard.ts). */
  statistic: 'Sum' | 'Maximum' | 'p99';
  /** What one data point is and who emits it (docs/architecture.md, "Metrics", is written from this). */
  description: string;
}

/**
 * Every metric the service emits, by name. The dashboard has a widget for each (test/infra/dashboard.test.ts
 * fails for a name without one), so adding one here is all it takes to chart it.
 */
export const METRIC_CATALOGUE = {
  CheckinsWritten: {
    unit: MetricUnit.Count,
    statistic: 'Sum',
    description: 'A check-in created (POST /checkins answered 201; functions/checkins/create.ts).',
  },
  RollupDepth: {
    unit: MetricUnit.Count,
    statistic: 'Maximum',
    description:
      'Rollup ancestors a check-in write (create, update, delete) moved in its own transaction (shared/domain/checkins/service.ts, reported by the check-in handlers); a write whose ancestors are recomputed after it (an ancestor without its aggregate yet, or more than fit the transaction) reports none.',
  },
  StreamLag: {
    unit: MetricUnit.Milliseconds,
    statistic: 'Maximum',
    description:
      'Age of each change-stream record when the stream processor receives it (functions/stream/processor.ts): how far derived state lags the table.',
  },
  WebhookDeliveryFailures: {
    unit: MetricUnit.Count,
    statistic: 'Sum',
    description: 'A webhook delivery attempt that did not succeed: retried later or given up (functions/workers/webhook-deliver.ts).',
  },
  WebhookDeliveriesFailed: {
    unit: MetricUnit.Count,
    statistic: 'Sum',
    description:
      'A webhook delivery given up (status failed: retries exhausted, or its endpoint deleted or disabled); its event did not reach the receiver.',
  },
  DataSourceSyncFailures: {
    unit: MetricUnit.Count,
    statistic: 'Sum',
    description:
      'A data-source sync that failed. Nothing syncs data sources yet (shared/domain/integrations): reserved for the sync worker.',
  },
  LimiterRefusals: {
    unit: MetricUnit.Count,
    statistic: 'Sum',
    description: 'A request the rate limiter refused with 429 rate_limited (shared/http/rate-limit.ts).',
  },
  IdempotentReplays: {
    unit: MetricUnit.Count,
    statistic: 'Sum',
    description: 'A stored answer replayed for a repeated Idempotency-Key (Idempotent-Replayed: true; shared/http/idempotency.ts).',
  },
} as const satisfies Record<string, MetricSpec>;

export type MetricName = keyof typeof METRIC_CATALOGUE;
export const METRIC_NAMES = Object.keys(METRIC_CATALOGUE) as MetricName[];

let instance: Metrics | undefined;

/**
 * The container's Metrics instance, made on first use (so the CDK app and the docs can read the catalogue
 * without one, and POWERTOOLS_METRICS_DISABLED is read when the first metric is emitted).
 */
export function serviceMetrics(): Metrics {
  return (instance ??= new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE }));
}

/**
 * Publishes one EMF line holding the given values: a number is one data point, an array several of the same
 * metric (a stream batch's record ages). Absent values and empty arrays are skipped; nothing is published when
 * nothing is left. Never throws: a metric must not fail the request or the batch that emits it.
 */
export function publishMetrics(values: Partial<Record<MetricName, number | readonly number[] | undefined>>): void {
  const m = serviceMetrics();
  try {
    let added = 0;
    for (const name of METRIC_NAMES) {
      const v = values[name];
      if (v === undefined) continue;
      for (const point of typeof v === 'number' ? [v] : v) {
        if (!Number.isFinite(point)) continue;
        m.addMetric(name, METRIC_CATALOGUE[name].unit, point);
        added++;
      }
    }
    // (another caller in this process may have published these with its own: the local stack serves requests at once)
    if (added > 0 && m.hasStoredMetrics()) m.publishStoredMetrics();
  } catch {
    m.clearMetrics(); // nothing half-added stays for the next emission
  }
}
