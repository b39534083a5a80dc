import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** CloudWatch allows at most 10 metrics in one alarm's math expression. */
const METRICS_PER_ALARM = 10;
const PERIOD = Duration.minutes(5);

/**
 * The service's alarms, all publishing to one SNS topic (docs/deploy.md says what each means and what to do).
 * The topic is encrypted with a customer managed key because CloudWatch cannot publish to a topic encrypted
 * with the AWS managed SNS key.
 */
export class ServiceAlarms extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];
  private readonly action: SnsAction;

  constructor(scope: Construct, id: string, props: { email?: string }) {
    super(scope, id);
    const key = new Key(this, 'TopicKey', {
      description: `${Stack.of(this).stackName}: encrypts the alarm topic`,
      enableKeyRotation: true,
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'], // in a key policy "*" means this key
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    this.topic = new Topic(this, 'Topic', { masterKey: key, enforceSSL: true });
    if (props.email) {
      const subscription = new EmailSubscription(props.email);
      this.topic.addSubscription(subscription);
      Validations.of(this.topic).acknowledge({
        id: 'Serverless-SNSRedrivePolicy',
        reason:
          'The only subscription is the operator e-mail: an undeliverable notification would sit in a queue nobody reads, and the alarm state itself is kept by CloudWatch.',
      });
    }
    this.action = new SnsAction(this.topic);
  }

  /** Any 5xx from the API: an unhandled handler error (500 internal), a timeout or an integration failure. */
  apiServerErrors(api: HttpApi): void {
    this.add(
      'Api5xx',
      api.metricServerError({ period: PERIOD, statistic: 'Sum' }),
      1,
      'The API answered 5xx: an unhandled error, a function timeout or an integration failure (see the access log and the function logs).',
    );
  }

  /** Lambda throttles across the given functions, in groups of ten (one math expression per alarm). */
  functionThrottles(id: string, fns: IFunction[]): void {
    for (let i = 0; i < fns.length; i += METRICS_PER_ALARM) {
      const group = fns.slice(i, i + METRICS_PER_ALARM);
      const usingMetrics: Record<string, IMetric> = {};
      group.forEach((fn, j) => (usingMetrics[`t${j}`] = fn.metricThrottles({ period: PERIOD, statistic: 'Sum' })));
      const expression = new MathExpression({
        expression: Object.keys(usingMetrics)
          .map((k) => `FILL(${k}, 0)`)
          .join(' + '),
        usingMetrics,
        period: PERIOD,
        label: 'Throttles',
      });
      this.add(
        `${id}${Math.floor(i / METRICS_PER_ALARM) + 1}`,
        expression,
        1,
        'Lambda throttled invocations (account or reserved concurrency exhausted); API callers got 5xx/429, queue messages were retried.',
      );
    }
  }

  /** A worker invocation failed as a whole (thrown error or timeout); items it reported as failed do not count. */
  workerErrors(id: string, fn: IFunction): void {
    this.add(
      id,
      fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
      1,
      'A queue worker invocation failed (thrown error or timeout); its batch will be retried and may dead-letter.',
    );
  }

  /** Messages waiting in a dead-letter queue: work that failed maxReceiveCount times and needs an operator. */
  deadLetters(id: string, dlq: IQueue): void {
    this.add(
      id,
      dlq.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
      1,
      'Messages are waiting in a dead-letter queue: they failed every retry and will not be processed until an operator redrives them.',
    );
  }

  /**
   * The change stream's oldest unprocessed record is older than `seconds`: derived state (rollups, current
   * values, read models, notices, outbound events) lags the table by at least that much.
   */
  streamLag(id: string, fn: IFunction, seconds: number): void {
    const age = fn.metric('IteratorAge', { period: PERIOD, statistic: 'Maximum' });
    this.add(
      id,
      age,
      seconds * 1000,
      `The table stream processor is more than ${seconds} s behind: derived state (rollups, read models, notices, webhooks) lags the table.`,
    );
  }

  /**
   * The oldest message of a work queue has waited `seconds` or more (SQS ApproximateAgeOfOldestMessage, the worst
   * minute): its worker does not keep up, so the derived state it makes (webhook deliveries, e-mails, syncs) lags
   * past contract 14's 60 s.
   */
  queueAge(id: string, name: string, queue: IQueue, seconds: number): void {
    this.add(
      id,
      queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
      seconds,
      `The oldest message of queue ${name} is more than ${seconds} s old: its worker does not keep up (or fails and retries), so what it derives lags the write past the 60 s of contract 14.`,
    );
  }

  private add(id: string, metric: IMetric, threshold: number, description: string): void {
    const alarm = new Alarm(this, id, {
      metric,
      threshold,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // No data means no requests, throttles or dead letters: healthy.
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    });
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    this.alarms.push(alarm);
  }
}
