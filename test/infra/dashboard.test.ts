import { beforeAll, describe, expect, it } from 'vitest';
import type { Template } from 'aws-cdk-lib/assertions';
import { METRIC_CATALOGUE, METRIC_NAMES, METRICS_NAMESPACE, METRICS_SERVICE } from '#shared/observability/metrics.ts';
import { build, mergedTemplate, refId, type Json } from './stack.fixture.ts';

/**
 * The dashboard's body as JSON: CloudFormation builds it with Fn::Join around references (region, alarm ARNs);
 * each reference becomes the string `@<logical id>` (pseudo parameters `@AWS::Region`), so the body parses and
 * an alarm widget can be matched to the alarm it shows.
 */
function dashboardBody(template: Template): { widgets: Json[] } {
  const dashboards = Object.values<Json>(template.findResources('AWS::CloudWatch::Dashboard'));
  expect(dashboards).toHaveLength(1);
  const body = dashboards[0]!.Properties.DashboardBody;
  const text =
    typeof body === 'string' ? body : (body['Fn::Join'][1] as unknown[]).map((p) => (typeof p === 'string' ? p : `@${refId(p)}`)).join('');
  return JSON.parse(text);
}

describe('CloudWatch dashboard', () => {
  let template: Template;
  let widgets: Json[];

  beforeAll(() => {
    template = mergedTemplate(build().stack);
    widgets = dashboardBody(template).widgets;
  });

  it('charts every metric of the catalogue (shared/observability/metrics.ts) in its namespace, with the service dimension and its statistic', () => {
    const charted = widgets.flatMap((w) => (w.type === 'metric' ? ((w.properties.metrics ?? []) as unknown[][]) : []));
    for (const name of METRIC_NAMES) {
      const line = charted.find((m) => m[0] === METRICS_NAMESPACE && m[1] === name);
      expect(line, `no widget charts ${name}`).toBeDefined();
      expect(line!.slice(2, 4)).toEqual(['service', METRICS_SERVICE]);
      expect((line![4] as Json).stat).toBe(METRIC_CATALOGUE[name].statistic);
    }
  });

  it("shows every alarm of the stack with its metric (the stream's IteratorAge among them), and their state", () => {
    const alarmIds = Object.keys(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarmIds.length).toBeGreaterThan(5);
    const shown = widgets.flatMap((w) => (w.type === 'metric' ? ((w.properties.annotations?.alarms ?? []) as string[]) : []));
    const status = widgets.find((w) => w.type === 'alarm')?.properties.alarms as string[] | undefined;
    for (const id of alarmIds) {
      expect(shown, `no widget shows alarm ${id}`).toContain(`@${id}`);
      expect(status, `alarm ${id} missing from the status widget`).toContain(`@${id}`);
    }
    const lag = alarmIds.find((id) => template.toJSON().Resources[id].Properties.MetricName === 'IteratorAge');
    expect(lag).toBeDefined();
    expect(shown).toContain(`@${lag}`);
  });

  it('names the dashboard in an output', () => {
    expect(template.toJSON().Outputs.DashboardUrl.Value).toBeDefined();
  });
});
