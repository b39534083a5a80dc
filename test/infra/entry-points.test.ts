import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalQueues } from '#shared/queue/queue.ts';
import { schedules, streamConsumers, type Worker } from '#shared/routes/index.ts';
import { WEBHOOK_DELIVERY_CONCURRENCY, WEBHOOK_DELIVERY_QUEUE } from '#shared/domain/webhooks/entity.ts';
import type { GoalTrackingStack } from '../../infra/stack.ts';
import { registerWorkers } from '../../scripts/lib/local-entry-points.ts';
import { allWorkers, build, logicalId, mergedTemplate, type Json } from './stack.fixture.ts';

/**
 * Every entry point is a row both stacks read (docs/architecture.md "Entry points"): the local stack runs each
 * worker's queue, each stream consumer and each schedule with the settings the CDK stack deploys.
 */
describe('entry points as rows, deployed and local alike', () => {
  let stack: GoalTrackingStack;
  let template: Template;
  let resources: Json;

  beforeAll(() => {
    stack = build().stack;
    template = mergedTemplate(stack);
    resources = template.toJSON().Resources;
  }, 300_000); // a synthesis of the whole stack: minutes on a loaded machine

  const mappingOf = (w: Worker) =>
    Object.values<Json>(template.findResources('AWS::Lambda::EventSourceMapping')).find(
      (m) => m.Properties.FunctionName?.Ref === logicalId(stack.workerFunctions.get(w)!.fn),
    )!.Properties;

  it("runs each worker's local queue as its event source is deployed: batch size, concurrency, batch window, visibility, receives", () => {
    const local = new LocalQueues();
    registerWorkers(local, allWorkers, async () => undefined);
    expect(allWorkers.some((w) => w.batchWindowSeconds)).toBe(true); // the fixture's row has one: the setting is compared, not absent on both sides
    for (const w of allWorkers) {
      const deployed = mappingOf(w);
      const queue = resources[logicalId(stack.queues.get(w.queue)!.queue)].Properties;
      const settings = local.settings(w.queue)!;
      expect(settings, w.queue).toEqual({
        queue: w.queue,
        batchSize: deployed.BatchSize,
        maxConcurrency: deployed.ScalingConfig.MaximumConcurrency,
        batchWindowSeconds: deployed.MaximumBatchingWindowInSeconds,
        // the local queue hides a message it hands out for 6x the worker's timeout, as the deployed queue's visibility timeout
        timeoutSeconds: queue.VisibilityTimeout / 6,
        maxReceiveCount: queue.RedrivePolicy.maxReceiveCount,
      });
      expect(deployed.ScalingConfig.MaximumConcurrency, w.queue).toBeGreaterThanOrEqual(2); // SQS's least
    }
  });

  it('caps the webhook deliveries at WEBHOOK_DELIVERY_CONCURRENCY batches: the most one endpoint has in flight', () => {
    const deliveries = allWorkers.find((w) => w.queue === WEBHOOK_DELIVERY_QUEUE)!;
    expect(mappingOf(deliveries).ScalingConfig).toEqual({ MaximumConcurrency: WEBHOOK_DELIVERY_CONCURRENCY });
  });

  it('alarms on the age of the oldest message of every queue at the 60 s of contract 14', () => {
    const alarms = Object.values<Json>(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
    for (const [name, wq] of stack.queues) {
      const age = alarms.find(
        (a) => a.MetricName === 'ApproximateAgeOfOldestMessage' && a.Dimensions?.[0]?.Value?.['Fn::GetAtt']?.[0] === logicalId(wq.queue),
      );
      expect(age, `no age alarm on ${name}`).toMatchObject({
        Namespace: 'AWS/SQS',
        Statistic: 'Maximum',
        Period: 60,
        Threshold: 60,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
    }
  });

  it('makes one function per stream consumer row on the table stream and one per schedule row with its rule', () => {
    const streamMappings = Object.values<Json>(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map((m) => m.Properties)
      .filter((p) => p.EventSourceArn?.['Fn::GetAtt']?.[1] === 'StreamArn');
    expect(streamMappings).toHaveLength(streamConsumers.length);
    for (const row of streamConsumers) {
      const fn = stack.streamFunctions.get(row)!;
      const m = streamMappings.find((p) => p.FunctionName.Ref === logicalId(fn.fn))!;
      expect(m, row.name).toMatchObject({ BatchSize: row.batchSize, MaximumRetryAttempts: row.retryAttempts });
      expect(resources[logicalId(fn.fn)].Properties.Timeout).toBe(row.timeoutSeconds);
    }
    const rules = Object.values<Json>(template.findResources('AWS::Events::Rule')).map((r) => r.Properties);
    expect(stack.scheduleFunctions.size).toBe(schedules.length);
    for (const row of schedules) {
      const fn = stack.scheduleFunctions.get(row)!;
      const rule = rules.find((r) => r.Targets?.some((t: Json) => t.Arn?.['Fn::GetAtt']?.[0] === logicalId(fn.fn)));
      expect(rule?.ScheduleExpression, row.name).toBe(`rate(${row.everyMinutes} minute${row.everyMinutes === 1 ? '' : 's'})`);
      expect(resources[logicalId(fn.fn)].Properties.Timeout).toBe(row.timeoutSeconds);
    }
  });
});
