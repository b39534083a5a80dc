import { CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import {
  AlarmStatusWidget,
  AlarmWidget,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  type Alarm,
  type IWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC_CATALOGUE, METRIC_NAMES, METRICS_NAMESPACE, METRICS_SERVICE } from '#shared/observability/metrics.ts';

const PERIOD = Duration.minutes(5);
/** A dashboard row is 24 units wide. */
const WIDTH = 8;
const PER_ROW = 24 / WIDTH;

/** Widgets in rows of three. */
function rows(dashboard: Dashboard, widgets: IWidget[]): void {
  for (let i = 0; i < widgets.length; i += PER_ROW) dashboard.addWidgets(...widgets.slice(i, i + PER_ROW));
}

/**
 * The operator's dashboard (docs/architecture.md, "Metrics"; docs/deploy.md, "Alarms"): one graph per metric of
 * the service's catalogue (shared/observability/metrics.ts, namespace GoalTracking, dimension `service`), built
 * from the catalogue so a new metric gets its widget, then the alarms' state and each alarm's own metric against
 * its threshold (5xx, throttles, worker errors, the stream's IteratorAge, dead letters, each queue's oldest
 * message), and the webhook deliveries: how many a second the worker finishes and the age of the oldest waiting.
 */
export class ServiceDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: { alarms: readonly Alarm[]; deliveries?: { queue?: IQueue; worker?: IFunction } }) {
    super(scope, id);
    const stack = Stack.of(this);
    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# ${stack.stackName}\nService metrics (${METRICS_NAMESPACE}), then every alarm with its metric. What each metric counts: docs/architecture.md, "Metrics".`,
        width: 24,
        height: 2,
      }),
    );
    rows(
      this.dashboard,
      METRIC_NAMES.map((name) => {
        const spec = METRIC_CATALOGUE[name];
        const metric = new Metric({
          namespace: METRICS_NAMESPACE,
          metricName: name,
          dimensionsMap: { service: METRICS_SERVICE },
          statistic: spec.statistic,
          period: PERIOD,
          label: `${name} (${spec.statistic})`,
        });
        return new GraphWidget({ title: name, left: [metric], width: WIDTH, height: 6 });
      }),
    );
    const { queue, worker } = props.deliveries ?? {};
    if (queue) {
      const minute = Duration.minutes(1);
      const perSecond = new MathExpression({
        expression: 'done / PERIOD(done)',
        usingMetrics: { done: queue.metricNumberOfMessagesDeleted({ period: minute, statistic: 'Sum' }) },
        period: minute,
        label: 'messages done per second (an attempt, or a message found stale or deferred)',
      });
      this.dashboard.addWidgets(
        new GraphWidget({
          title: 'Webhook deliveries per second',
          left: [perSecond],
          right: worker ? [worker.metricInvocations({ period: minute, statistic: 'Sum', label: 'worker batches a minute' })] : [],
          width: 12,
          height: 6,
        }),
        new GraphWidget({
          title: 'Webhook deliveries: age of the oldest waiting (s; alarm at 60)',
          left: [queue.metricApproximateAgeOfOldestMessage({ period: minute, statistic: 'Maximum' })],
          right: [queue.metricApproximateNumberOfMessagesVisible({ period: minute, statistic: 'Maximum', label: 'waiting' })],
          width: 12,
          height: 6,
        }),
      );
    }
    this.dashboard.addWidgets(
      new AlarmStatusWidget({
        title: 'Alarms',
        alarms: [...props.alarms],
        width: 24,
        height: Math.max(2, Math.ceil(props.alarms.length / 4) + 1),
      }),
    );
    rows(
      this.dashboard,
      props.alarms.map((alarm) => new AlarmWidget({ title: alarm.node.id, alarm, width: WIDTH, height: 6 })),
    );
    new CfnOutput(stack, 'DashboardUrl', {
      value: `https://${stack.region}.console.aws.amazon.com/cloudwatch/home?region=${stack.region}#dashboards:name=${this.dashboard.dashboardName}`,
      description: 'CloudWatch dashboard: the service metrics and every alarm',
    });
  }
}
