import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AssetHashType, DockerImage, type Duration, type ILocalBundling, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { buildSync } from 'esbuild';
import { REPO_ROOT } from '../paths.ts';
import { esbuildOptionsOf, SERVICE_BUNDLING } from './service-bundling.ts';
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

/**
 * Bundles one handler in-process with the esbuild JS API (esbuildOptionsOf: index.mjs, its source map and
 * chunks), then copies `files` (repository-relative) to the same relative path in the bundle, where
 * shared/docs/bundled-file.ts reads them. Local bundling of a plain lambda.Function rather than NodejsFunction,
 * which always bundles to one file and runs esbuild through a fresh `npx` process: splitting afterwards meant
 * bundling every function twice. `entry` and `files` are data fields on purpose: AssetStaging caches staged
 * assets by the JSON of the bundling options, where a function does not show, so without them every function
 * would get the first one's bundle.
 */
class EsbuildBundling implements ILocalBundling {
  constructor(
    readonly entry: string,
    readonly files: readonly string[],
  ) {
    for (const file of files) if (!existsSync(join(REPO_ROOT, file))) throw new Error(`bundle file ${file} does not exist`);
  }

  tryBundle(outputDir: string): boolean {
    buildSync({ ...esbuildOptionsOf(SERVICE_BUNDLING, outputDir), entryPoints: [join(REPO_ROOT, this.entry)], absWorkingDir: REPO_ROOT });
    for (const file of this.files) {
      mkdirSync(dirname(join(outputDir, file)), { recursive: true });
      copyFileSync(join(REPO_ROOT, file), join(outputDir, file));
    }
    return true;
  }
}

/**
 * One Lambda function with the service's fixed defaults, so every route and worker is built the same way:
 * Node.js 22 on arm64, bundled once, in-process, as SERVICE_BUNDLING says (service-bundling.ts), its own log group with retention,
 * active X-Ray tracing, and its own execution role holding nothing but log and trace writes until a grant
 * helper adds exactly what its row declares.
 */
export class ServiceFunction extends Construct implements TableBindable, iam.IGrantable {
  readonly fn: LambdaFunction;
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

    this.fn = new LambdaFunction(this, 'Function', {
      // The handler's directory is only the nominal source: the asset is the bundle, hashed by its content
      // (OUTPUT, as NodejsFunction does), and nothing is fingerprinted or copied from the source. A stack
      // synthesized without bundling (not in aws:cdk:bundling-stacks, as in the other infra tests) skips
      // tryBundle and stages this directory unbuilt.
      code: Code.fromAsset(dirname(join(REPO_ROOT, props.handler)), {
        assetHashType: AssetHashType.OUTPUT,
        bundling: {
          local: new EsbuildBundling(props.handler, props.bundleFiles ?? []),
          // Required by the type, used only when tryBundle returns false, which it never does.
          image: DockerImage.fromRegistry('unused-local-bundling-only'),
        },
      }),
      handler: 'index.handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout,
      role: this.role,
      logGroup: this.logGroup,
      tracing: Tracing.ACTIVE,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: 'goal-tracking',
        LOG_LEVEL: 'INFO',
        ...props.environment,
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
