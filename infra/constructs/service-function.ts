import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Duration, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, type ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { REPO_ROOT } from '../paths.ts';
import { SERVICE_BUNDLING, splitBundleHooks } from './service-bundling.ts';
import type { TableBindable } from './tenant-data.ts';

export interface ServiceFunctionProps {
  /** Repository-relative TypeScript handler exporting `handler` (a route or worker row's `handler`). */
  handler: string;
  description: string;
  /** IAM path of the execution role; decides which tenant role may be assumed (TenantData.rolePath). */
  rolePath: string;
  timeout: Duration;
  memorySize?: number;
  logRetention: RetentionDays;
  environment?: Record<string, string>;
  /** Repository-relative files the handler reads at run time, copied into the bundle at the same relative path. */
  bundleFiles?: string[];
}

/** Bundling hooks that copy files (repository-relative) next to the bundle, where shared/docs/bundled-file.ts reads them. */
function copyIntoBundle(files: string[]): ICommandHooks {
  for (const file of files) if (!existsSync(join(REPO_ROOT, file))) throw new Error(`bundle file ${file} does not exist`);
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) =>
      files.map((f) => `mkdir -p "${join(outputDir, dirname(f))}" && cp "${join(inputDir, f)}" "${join(outputDir, f)}"`),
  };
}

/**
 * One Lambda function with the service's fixed defaults, so every route and worker is built the same way:
 * Node.js 22 on arm64, bundled as SERVICE_BUNDLING says (service-bundling.ts), its own log group with retention,
 * active X-Ray tracing, and its own execution role holding nothing but log and trace writes until a grant
 * helper adds exactly what its row declares.
 */
export class ServiceFunction extends Construct implements TableBindable, iam.IGrantable {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  readonly rolePath: string;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    this.rolePath = props.rolePath;
    // An explicit role: the default one would carry the AWS managed AWSLambdaBasicExecutionRole (log writes to
    // every log group in the account); this one may write only to the function's own log group.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      path: props.rolePath,
      description: `Execution role of ${props.handler}`,
    });
    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention });
    this.logGroup.grantWrite(this.role);

    this.fn = new NodejsFunction(this, 'Function', {
      entry: join(REPO_ROOT, props.handler),
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout,
      role: this.role,
      logGroup: this.logGroup,
      tracing: Tracing.ACTIVE,
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: 'goal-tracking',
        LOG_LEVEL: 'INFO',
        ...props.environment,
      },
      bundling: {
        ...SERVICE_BUNDLING,
        externalModules: [...SERVICE_BUNDLING.externalModules],
        mainFields: [...SERVICE_BUNDLING.mainFields],
        commandHooks: splitBundleHooks(props.handler, props.bundleFiles?.length ? copyIntoBundle(props.bundleFiles) : undefined),
      },
    });

    // Findings that hold for every function of the service, acknowledged here once with their reason.
    Validations.of(this).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'X-Ray tracing (Tracing.ACTIVE) needs xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions; every other statement names its resources.',
      },
      {
        id: 'AwsSolutions-L1',
        reason:
          'Pinned to Node.js 22 on purpose: package.json engines, the local stack and the tests run Node 22; moving runtimes is a deliberate change of all three.',
      },
      {
        id: 'Serverless-LambdaLatestVersion',
        reason:
          'Pinned to Node.js 22 on purpose: package.json engines, the local stack and the tests run Node 22; moving runtimes is a deliberate change of all three.',
      },
      {
        id: 'Serverless-LambdaDLQ',
        reason:
          'Never invoked asynchronously: API Gateway invokes synchronously and returns the error to the client; SQS event source mappings redrive failed messages to the queue’s own dead-letter queue.',
      },
    );
  }

  /** Grants land on the execution role (lets `queue.grantSend(fn)`-style helpers take the function). */
  get grantPrincipal(): iam.IPrincipal {
    return this.role;
  }

  addEnvironment(key: string, value: string): void {
    this.fn.addEnvironment(key, value);
  }

  addToPolicy(statement: iam.PolicyStatement): void {
    this.role.addToPrincipalPolicy(statement);
  }
}
