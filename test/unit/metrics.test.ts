import type { DynamoDBRecord, SQSEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Db } from '#shared/db/client.ts';
import { collectSignals, reportSignal } from '#shared/signals.ts';
import { RateLimitedError } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { emitMetric, emitMetrics } from '#shared/observability/emit.ts';
import {
  METRIC_CATALOGUE,
  METRIC_NAMES,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  publishMetrics,
  serviceMetrics,
  type MetricName,
} from '#shared/observability/metrics.ts';

// The call sites' collaborators that would reach DynamoDB, SQS or a receiver: each test drives the real call
// site (the limiter's refusal, the idempotent replay, the delivery worker, the stream handler) over these.
const delivery = vi.hoisted(() => ({ outcome: 'retrying' as string }));
vi.mock('#shared/db/tenant-scope.ts', () => ({ tenantDb: async () => ({}) }));
vi.mock('#shared/domain/webhooks/deliveries.ts', () => ({
  attemptDelivery: async () => ({ outcome: delivery.outcome, status_code: 500 }),
}));
vi.mock('#shared/db/rate-limit-store.ts', async (original) => ({
  ...(await original<typeof import('#shared/db/rate-limit-store.ts')>()),
  readTenantLimits: async () => undefined,
  leaseTokens: async () => ({ granted: 0, tat: Date.now() + 1000, retryAfterMs: 1000 }),
}));
vi.mock('#shared/auth/id-seed-secret.ts', () => ({ idSeedSecret: async () => 'seed' }));
vi.mock('#shared/db/idempotency-store.ts', () => ({
  IDEMPOTENCY_TTL_SECONDS: 86_400,
  idempotencyRecordKey: () => 'key',
  idempotencyStoreFor: () => ({}),
}));
// Powertools idempotency finds a stored answer: what it returns is the stored response through the responseHook.
vi.mock('@aws-lambda-powertools/idempotency', () => ({
  IdempotencyConfig: class {
    constructor(readonly opts: { responseHook: (r: unknown) => unknown }) {}
    registerLambdaContext() {}
  },
  makeIdempotent: (_fn: unknown, o: { config: { opts: { responseHook: (r: unknown) => unknown } } }) => async () =>
    o.config.opts.responseHook({ statusCode: 201, headers: {}, body: '{}' }),
}));

interface Emf {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> };
  [key: string]: unknown;
}

/** Every EMF document published, as Powertools serializes it (the line it prints in Lambda). */
let published: Emf[];

beforeEach(() => {
  logger.setLogLevel('SILENT'); // the delivery worker's per-message lines
  published = [];
  const m = serviceMetrics();
  vi.spyOn(m, 'publishStoredMetrics').mockImplementation(function (this: typeof m) {
    published.push(m.serializeMetrics() as unknown as Emf);
    m.clearMetrics();
    return m;
  });
});
afterEach(() => vi.restoreAllMocks());

/** The values published for `name`, each EMF document checked for namespace, service dimension and unit. */
function valuesOf(name: MetricName): number[] {
  const out: number[] = [];
  for (const doc of published) {
    const meta = doc._aws.CloudWatchMetrics[0]!;
    const def = meta.Metrics.find((x) => x.Name === name);
    if (!def) continue;
    expect(meta.Namespace).toBe(METRICS_NAMESPACE);
    expect(meta.Dimensions).toEqual([['service']]);
    expect(doc.service).toBe(METRICS_SERVICE);
    expect(def.Unit).toBe(METRIC_CATALOGUE[name].unit);
    const v = doc[name] as number | number[];
    out.push(...(Array.isArray(v) ? v : [v]));
  }
  return out;
}

const sqsEvent = (body: object): SQSEvent => ({
  Records: [
    {
      messageId: 'm1',
      receiptHandle: 'r',
      body: JSON.stringify(body),
      attributes: { ApproximateReceiveCount: '1' } as never,
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn',
      awsRegion: 'us-east-1',
    },
  ],
});
const deliveryMessage = {
  version: 1,
  tenant_uuid: '00000000-0000-4000-8000-000000000001',
  webhook_uuid: '00000000-0000-4000-8000-000000000002',
  delivery_uuid: '00000000-0000-4000-8000-000000000003',
  seq: 0,
  not_before: 0,
};

describe('service metrics (shared/observability/metrics.ts)', () => {
  it('catalogues each metric once, with a unit, a statistic and a description', () => {
    expect(METRIC_NAMES.sort()).toEqual([
      'CheckinsWritten',
      'DataSourceSyncFailures',
      'IdempotentReplays',
      'LimiterRefusals',
      'RollupDepth',
      'StreamLag',
      'WebhookDeliveriesFailed',
      'WebhookDeliveryFailures',
    ]);
    for (const name of METRIC_NAMES) expect(METRIC_CATALOGUE[name].description.length).toBeGreaterThan(20);
  });

  it('CheckinsWritten and RollupDepth: what a check-in handler emits, the depth reported by the domain through its port', async () => {
    const { value, signals } = await collectSignals(async () => {
      await Promise.resolve();
      reportSignal('rollupDepth', 3); // as afterCheckinWrite does after the commit
      return 'view';
    });
    expect(value).toBe('view');
    expect(signals).toEqual({ rollupDepth: 3 });
    await emitMetrics({ CheckinsWritten: 1, RollupDepth: signals.rollupDepth });
    expect(valuesOf('CheckinsWritten')).toEqual([1]);
    expect(valuesOf('RollupDepth')).toEqual([3]);
    expect(published).toHaveLength(1); // one line for both
  });

  it('a domain signal outside a collection goes nowhere, and collections do not share', async () => {
    reportSignal('rollupDepth', 5);
    const [a, b] = await Promise.all([collectSignals(async () => reportSignal('rollupDepth', 1)), collectSignals(async () => undefined)]);
    expect(a.signals).toEqual({ rollupDepth: 1 });
    expect(b.signals).toEqual({});
    await emitMetrics({ RollupDepth: b.signals.rollupDepth });
    expect(published).toEqual([]); // nothing to publish, no empty line
  });

  it('StreamLag: the stream handler publishes the age of each record it received', async () => {
    const { handler } = await import('#functions/stream/processor.ts');
    // records of no tenant item: the processor skips them without touching the table
    const record = (ageMs: number, n: number): DynamoDBRecord => ({
      eventID: `e${n}`,
      eventName: 'INSERT',
      dynamodb: {
        ApproximateCreationDateTime: (Date.now() - ageMs) / 1000,
        Keys: { PK: { S: 'X' }, SK: { S: 'Y' } },
        SequenceNumber: String(n),
      },
    });
    const result = await handler({ Records: [record(5_000, 1), record(60_000, 2)] });
    expect(result).toEqual({ batchItemFailures: [] });
    const ages = valuesOf('StreamLag');
    expect(ages).toHaveLength(2);
    expect(ages[0]).toBeGreaterThanOrEqual(5_000);
    expect(ages[0]).toBeLessThan(15_000);
    expect(ages[1]).toBeGreaterThanOrEqual(60_000);
  });

  it('WebhookDeliveryFailures and WebhookDeliveriesFailed: the delivery worker counts a failed attempt, and a given-up delivery', async () => {
    const { webhookDeliverHandler } = await import('#functions/workers/webhook-deliver.ts');
    const worker = webhookDeliverHandler(() => ({ queue: { send: async () => undefined } }) as never);
    delivery.outcome = 'retrying';
    expect(await worker(sqsEvent(deliveryMessage))).toEqual({ batchItemFailures: [] });
    expect(valuesOf('WebhookDeliveryFailures')).toEqual([1]);
    expect(valuesOf('WebhookDeliveriesFailed')).toEqual([]);
    delivery.outcome = 'failed';
    await worker(sqsEvent(deliveryMessage));
    expect(valuesOf('WebhookDeliveryFailures')).toEqual([1, 1]);
    expect(valuesOf('WebhookDeliveriesFailed')).toEqual([1]);
    delivery.outcome = 'succeeded';
    await worker(sqsEvent(deliveryMessage));
    expect(published).toHaveLength(2); // a success emits nothing
  });

  it('LimiterRefusals: a 429 from the limiter', async () => {
    const { RateLimiter } = await import('#shared/http/rate-limit.ts');
    const limiter = new RateLimiter({ db: async () => ({}) as Db, tableName: () => 't', defaults: () => ({ rps: 1, burst: 1 }) });
    await expect(limiter.take('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002')).rejects.toBeInstanceOf(
      RateLimitedError,
    );
    expect(valuesOf('LimiterRefusals')).toEqual([1]);
  });

  it('IdempotentReplays: an answer replayed with Idempotent-Replayed: true', async () => {
    const { runIdempotent } = await import('#shared/http/idempotency.ts');
    const authorizeReplay = vi.fn(async () => undefined);
    const scope = {
      db: {} as Db,
      tenantId: 't',
      userId: 'u',
      route: 'POST /x',
      params: {},
      key: 'k',
      body: { kind: 'none' } as const,
      context: {} as never,
      authorizeReplay,
    };
    const result = await runIdempotent(scope, async () => ({ statusCode: 201 }));
    expect(result.headers?.['Idempotent-Replayed']).toBe('true');
    expect(authorizeReplay).toHaveBeenCalledOnce();
    expect(valuesOf('IdempotentReplays')).toEqual([1]);
  });

  it('DataSourceSyncFailures: catalogued for the sync worker to come, published like any other', async () => {
    await emitMetric('DataSourceSyncFailures');
    expect(valuesOf('DataSourceSyncFailures')).toEqual([1]);
  });

  it('never throws, and leaves nothing behind for the next line, when a value is refused', () => {
    publishMetrics({ CheckinsWritten: Number.NaN, RollupDepth: [] });
    expect(published).toEqual([]);
    publishMetrics({ CheckinsWritten: 1 });
    expect(valuesOf('CheckinsWritten')).toEqual([1]);
  });

  it('prints nothing where POWERTOOLS_METRICS_DISABLED is set (the local stack and the test configs)', () => {
    vi.mocked(serviceMetrics().publishStoredMetrics).mockRestore();
    expect(process.env.POWERTOOLS_METRICS_DISABLED).toBe('true');
    const write = vi.spyOn(process.stdout, 'write');
    publishMetrics({ CheckinsWritten: 1 });
    expect(write.mock.calls.filter(([chunk]) => String(chunk).includes('CloudWatchMetrics'))).toEqual([]);
    expect(serviceMetrics().hasStoredMetrics()).toBe(false); // published (into the void) and cleared
  });
});
