import { App, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { Route, Worker } from '#shared/routes/index.ts';
import { readConfig } from './config.ts';
import { GoalTrackingStack } from './stack.ts';

export interface BuildOptions extends AppProps {
  /** Tests only: rows other than the route table / worker list. */
  routes?: Route[];
  workers?: Worker[];
  /** Tests only: skip registering the cdk-nag packs (the nag test runs them itself). Default true. */
  nag?: boolean;
}

/**
 * The CDK app: the stack, configured from context, and the cdk-nag AwsSolutions and Serverless packs as
 * validation plugins, so `cdk synth` (and `npm run synth`) fails on any finding that is not acknowledged in
 * the code with its reason. Tests build the same app.
 */
export function buildApp(opts: BuildOptions = {}): { app: App; stack: GoalTrackingStack; packs: [AwsSolutionsChecks, ServerlessChecks] } {
  const { routes, workers, nag = true, ...appProps } = opts;
  const app = new App(appProps);
  const config = readConfig(app.node);
  // Environment-agnostic: deployed into the account and region of the credentials `cdk deploy` runs with.
  const stack = new GoalTrackingStack(app, config.stackName, { config, routes, workers });
  const packs: [AwsSolutionsChecks, ServerlessChecks] = [new AwsSolutionsChecks(app), new ServerlessChecks(app)];
  if (nag) Validations.of(app).addPlugins(...packs);
  return { app, stack, packs };
}
