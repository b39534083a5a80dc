import { Annotations, CfnOutput, Duration, NestedStack, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import {
  HttpApi,
  HttpAuthorizer,
  HttpAuthorizerType,
  HttpMethod,
  HttpNoneAuthorizer,
  HttpRoute,
  HttpRouteKey,
  LogGroupLogDestination,
  type HttpRouteAuthorizerConfig,
  type IHttpRouteAuthorizer,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { Construct } from 'constructs';
import {
  routeName,
  routes as routeTable,
  schedules as scheduleTable,
  streamConsumers as streamTable,
  workers as workerTable,
  type Route,
  type Schedule as ScheduleRow,
  type StreamConsumer,
  type Worker,
} from '#shared/routes/index.ts';
import { tableAccessOf } from '#shared/routes/types.ts';
import type { StackConfig } from './config.ts';
import { ServiceAlarms } from './constructs/alarms.ts';
import { ServiceDashboard } from './constructs/dashboard.ts';
import { Mailer } from './constructs/mailer.ts';
import { OutboundEvents } from './constructs/outbound-events.ts';
import { ServiceFunction } from './constructs/service-function.ts';
import { TABLE_ACTIONS, TenantData, type TableAccess } from './constructs/tenant-data.ts';
import { TokenIssuer } from './constructs/token-issuer.ts';
import { WorkQueue } from './constructs/work-queue.ts';
import { WEBHOOK_DELIVERY_QUEUE } from '#shared/domain/webhooks/entity.ts';

export interface GoalTrackingStackProps extends StackProps {
  config: StackConfig;
  /** Defaults to the route table; tests pass their own rows to exercise shapes the table does not have yet. */
  routes?: Route[];
  /** Defaults to the worker lists aggregated in shared/routes/index.ts. */
  workers?: Worker[];
  /** Defaults to the stream consumers and schedules of shared/routes/index.ts. */
  streamConsumers?: StreamConsumer[];
  schedules?: ScheduleRow[];
}

/** Contract 14: derived state (events, webhooks, e-mail, history) follows a write within 60 s; the stack alarms past that. */
const DERIVED_STATE_SECONDS = 60;

/** Route functions: API Gateway gives up after 30 s; a request that needs more belongs on a queue. */
const ROUTE_TIMEOUT = Duration.seconds(10);

import { queueUrlEnv } from '#shared/queue/queue.ts';
import { DOORS, gatewayChecksJwt } from '#shared/http/doors.ts';

export { queueUrlEnv };

/** `support-email` → `SupportEmail`, for construct ids and output names. */
const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/**
 * Paths the stack serves as its own token issuer (JWKS and discovery, and the client credentials grant of service
 * accounts, which signs with the stack's key). With an external issuer that issuer publishes its own and issues
 * every token, so these routes are left out rather than deployed to answer 500.
 */
const isSelfIssuerRoute = (r: Route) => r.path.startsWith('/.well-known/') || r.path === '/oauth/token';

/** Routes use the one authorizer created in the parent stack, whichever nested stack they live in. */
class SharedAuthorizer implements IHttpRouteAuthorizer {
  constructor(private readonly authorizer: HttpAuthorizer) {}
  bind(): HttpRouteAuthorizerConfig {
    return { authorizerId: this.authorizer.authorizerId, authorizationType: 'JWT' };
  }
}

/**
 * Every authenticated request reads its caller's user record before the handler runs (resolveCaller in
 * shared/http/api.ts), so a JWT route needs at least read access whatever its row says.
 */
export function routeTableAccess(r: Route): TableAccess | 'none' {
  return tableAccessOf(r);
}

/**
 * The whole service: one HTTP API whose routes and one Lambda each come from the route table, one queue (with
 * its dead-letter queue) and one Lambda per worker row, the table, the issuer key, SES and the alarms.
 * Everything a function may do is derived from its row: `table`, `sendsTo`, `needs`, `sendsEmail`.
 *
 * A route costs seven resources (function, role, policy, log group, integration, permission, route) and a
 * CloudFormation stack holds at most 500, so the routes of each resource group (`doc.tag`) live in a nested
 * stack of their own; shared resources (API, authorizer, table, queues, key) stay here. Grouping by tag keeps a
 * route in the same nested stack as the table grows (moving a route between stacks in one deployment would
 * create it in one before deleting it from the other, and API Gateway refuses duplicate route keys).
 */
export class GoalTrackingStack extends Stack {
  readonly api: HttpApi;
  readonly data: TenantData;
  readonly issuerUrl: string;
  readonly issuerKey?: TokenIssuer;
  readonly queues = new Map<string, WorkQueue>();
  readonly routeFunctions = new Map<Route, ServiceFunction>();
  /** One nested stack per route group (`doc.tag`). */
  readonly routeGroups = new Map<string, NestedStack>();
  readonly workerFunctions = new Map<Worker, ServiceFunction>();
  readonly mailer: Mailer;
  readonly outboundEvents: OutboundEvents;
  /** Keys the ids of Idempotency-Key requests and the list cursors (shared/auth/id-seed-secret.ts): HMAC, only GenerateMac granted. */
  readonly idSeedKey: Key;
  readonly alarms: ServiceAlarms;
  /** One function per stream consumer row (the change stream's processor, shared/stream/). */
  readonly streamFunctions = new Map<StreamConsumer, ServiceFunction>();
  /** The stream consumers' on-failure destination. */
  readonly streamDeadLetters: Queue;
  /** One function per schedule row, run by its EventBridge rule (the data-source sweep). */
  readonly scheduleFunctions = new Map<ScheduleRow, ServiceFunction>();
  private bedrockBound = false;

  constructor(scope: Construct, id: string, props: GoalTrackingStackProps) {
    super(scope, id, { description: 'Goal-tracking API (HTTP API + Lambda + DynamoDB + SQS + SES)', ...props });
    const config = props.config;
    const workers = props.workers ?? workerTable;
    const streams = props.streamConsumers ?? streamTable;
    const schedules = props.schedules ?? scheduleTable;
    const routes = (props.routes ?? routeTable).filter((r) => config.issuer.kind === 'self' || !isSelfIssuerRoute(r));

    this.data = new TenantData(this, 'Data');
    this.mailer = new Mailer(this, 'Mail', { from: config.emailFrom, identity: config.emailIdentity });
    if (config.issuer.kind === 'self') this.issuerKey = new TokenIssuer(this, 'Issuer');
    this.outboundEvents = new OutboundEvents(this, 'OutboundEvents');
    this.idSeedKey = new Key(this, 'IdSeedKey', {
      description: `${this.stackName}: keys the record ids of Idempotency-Key requests`,
      keySpec: KeySpec.HMAC_256,
      keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
      // A new key gives a retry of a request that committed and died other ids (a second copy of its records).
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // ---- API ----
    this.api = new HttpApi(this, 'Api', {
      apiName: this.stackName,
      description: 'Goal-tracking API',
      // The default stage is added below: the one created here cannot take throttling or access logs.
      createDefaultStage: false,
    });
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', { retention: config.logRetention });
    this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: config.throttle,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        // One JSON object per request; the request id is the one handlers log and return in x-request-id.
        format: AccessLogFormat.custom(
          JSON.stringify({
            request_id: '$context.requestId',
            ip: '$context.identity.sourceIp',
            time: '$context.requestTime',
            route: '$context.routeKey',
            status: '$context.status',
            protocol: '$context.protocol',
            response_length: '$context.responseLength',
            response_latency_ms: '$context.responseLatency',
            integration_status: '$context.integrationStatus',
            integration_latency_ms: '$context.integrationLatency',
            integration_error: '$context.integrationErrorMessage',
            authorizer_error: '$context.authorizer.error',
            user_agent: '$context.identity.userAgent',
          }),
        ),
      },
    });
    // With the $default stage the stage URL is the API endpoint itself, without a trailing slash: the exact
    // `iss` the self issuer signs and the JWT authorizer expects. Functions may reference it: they are the
    // API's integrations, not its dependencies, so there is no cycle.
    this.issuerUrl = config.issuer.kind === 'self' ? this.api.apiEndpoint : config.issuer.url;
    const jwt = new SharedAuthorizer(
      new HttpAuthorizer(this, 'JwtAuthorizer', {
        httpApi: this.api,
        authorizerName: 'JwtAuthorizer',
        type: HttpAuthorizerType.JWT,
        jwtIssuer: this.issuerUrl,
        jwtAudience: config.jwtAudience,
        identitySource: ['$request.header.Authorization'],
      }),
    );

    // ---- queues (one per worker row) ----
    for (const w of workers) {
      if (this.queues.has(w.queue)) throw new Error(`two workers consume queue ${w.queue}`);
      this.queues.set(
        w.queue,
        new WorkQueue(this, `${pascal(w.queue)}Queue`, {
          maxReceiveCount: w.maxReceiveCount,
          workerTimeout: Duration.seconds(w.timeoutSeconds),
        }),
      );
    }

    const common: Record<string, string> = { TENANT_CLAIM: config.tenantClaim, USER_CLAIM: config.userClaim };

    // ---- one function + one route per route row ----
    for (const route of routes) {
      const name = routeName(route);
      const access = routeTableAccess(route);
      const group = this.routeGroup(route.doc.tag);
      const fn = new ServiceFunction(group, name, {
        handler: route.handler,
        bundleFiles: route.bundleFiles,
        description: `${route.method} ${route.path}`,
        rolePath: this.data.rolePath(access),
        timeout: ROUTE_TIMEOUT,
        logRetention: config.logRetention,
        environment: {
          ...common,
          ISSUER_URL: this.issuerUrl,
          // the public base URL the service names itself by (MCP resource metadata, SCIM meta.location), never the Host header
          API_BASE_URL: this.api.apiEndpoint,
          JWT_AUDIENCE: config.jwtAudience[0]!,
          ...(route.auth === 'jwt' || route.rateLimited || route.door === 'push' ? this.limitDefaults(config) : {}),
          ...(route.scope ? { ROUTE_SCOPE: route.scope } : {}),
        },
      });
      if (access !== 'none') this.data.bindTable(fn, access);
      this.bindQueues(fn, route.sendsTo ?? [], name);
      this.bindNeeds(fn, route.needs ?? [], name, config);
      // Every authenticated POST honours Idempotency-Key (contract section 11), so each may seed ids; every list
      // signs and checks its cursors (contract 18) with a key derived from the same secret (shared/list/cursor.ts).
      if ((route.auth === 'jwt' || route.door === 'push') && (route.method === 'POST' || route.doc.list || route.listEngine)) {
        fn.addToPolicy(new iam.PolicyStatement({ actions: ['kms:GenerateMac'], resources: [this.idSeedKey.keyArn] }));
        fn.addEnvironment('ID_SEED_KMS_KEY_ID', this.idSeedKey.keyArn);
      }
      this.routeFunctions.set(route, fn);

      // a row whose function checks the token itself (door mcp: credential function-jwt) has no gateway authorizer
      const authorizer: IHttpRouteAuthorizer = gatewayChecksJwt(route.door) ? jwt : new HttpNoneAuthorizer();
      const httpRoute = new HttpRoute(group, `${name}Route`, {
        httpApi: this.api,
        routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
        integration: new HttpLambdaIntegration(`${name}Integration`, fn.fn),
        authorizer,
        // API Gateway refuses a token without the row's scope before the function runs (contract section 17)
        ...(gatewayChecksJwt(route.door) && route.scope ? { authorizationScopes: [route.scope] } : {}),
      });
      if (DOORS[route.door].credential === 'function-jwt') {
        Validations.of(httpRoute).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason: `${route.method} ${route.path} checks the bearer token in its function (door mcp in the route table): the JWT authorizer's 401 cannot carry the WWW-Authenticate resource_metadata header MCP clients need.`,
        });
      } else if (route.auth === 'public') {
        Validations.of(httpRoute).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason:
            route.door === 'push'
              ? `${route.method} ${route.path} takes no user token by design (a cron job or a script pushes with the data source's own secret): the function checks that credential (push secret) itself, in constant time, and rate-limits it.`
              : `${route.method} ${route.path} is public by design (auth: public in the route table): the OpenAPI document, its reference page and the issuer's JWKS/discovery must be readable without a token, and the JWT authorizer itself fetches the latter.`,
        });
      }
    }

    // ---- one function per worker row, fed by its queue ----
    for (const w of workers) {
      const name = `${pascal(w.queue)}Worker`;
      const queue = this.queues.get(w.queue)!;
      const fn = new ServiceFunction(this, name, {
        handler: w.handler,
        description: `Worker for queue ${w.queue}`,
        rolePath: this.data.rolePath(w.table),
        timeout: Duration.seconds(w.timeoutSeconds),
        logRetention: config.logRetention,
        environment: { ...common, ...(w.rateLimited ? this.limitDefaults(config) : {}) },
      });
      if (w.table !== 'none') this.data.bindTable(fn, w.table);
      this.bindQueues(fn, w.sendsTo ?? [], name);
      this.bindNeeds(fn, w.needs ?? [], name, config);
      if (w.sendsEmail) {
        this.mailer.grantSend(fn);
        fn.addEnvironment('EMAIL_FROM', this.mailer.from);
        fn.addEnvironment('SES_CONFIGURATION_SET', this.mailer.configurationSet.configurationSetName);
      }
      // Partial batch responses: only the items the handler reports as failed are retried.
      fn.fn.addEventSource(
        new SqsEventSource(queue.queue, {
          batchSize: w.batchSize,
          reportBatchItemFailures: true,
          maxConcurrency: w.maxConcurrency,
          ...(w.batchWindowSeconds ? { maxBatchingWindow: Duration.seconds(w.batchWindowSeconds) } : {}),
        }),
      );
      Validations.of(fn).acknowledge({
        id: 'Serverless-LambdaEventSourceMappingDestination',
        reason:
          'SQS event source mappings take no on-failure destination; failed messages go to the queue’s redrive dead-letter queue (alarmed).',
      });
      this.workerFunctions.set(w, fn);
    }

    // ---- the change stream's processor: derived state (shared/stream/projections.ts) ----
    this.streamDeadLetters = new Queue(this, 'StreamDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.streamDeadLetters).acknowledge(
      {
        id: 'Serverless-SQSRedrivePolicy',
        reason:
          'This queue is the on-failure destination of the table stream processor; it holds records for an operator (npm run admin -- redrive), its depth is alarmed.',
      },
      {
        id: 'AwsSolutions-SQS3',
        reason:
          'This queue is itself a dead-letter store (the stream processor on-failure destination); a DLQ of a DLQ would only move the problem, its depth is alarmed instead.',
      },
    );
    for (const row of streams) {
      const fn = new ServiceFunction(this, row.name, {
        handler: row.handler,
        description: row.description,
        rolePath: this.data.rolePath(row.table),
        timeout: Duration.seconds(row.timeoutSeconds),
        logRetention: config.logRetention,
        environment: common,
      });
      this.data.bindTable(fn, row.table);
      this.bindQueues(
        fn,
        row.sendsTo.filter((q) => this.queues.has(q)),
        row.name,
      );
      this.bindNeeds(fn, row.needs, row.name, config);
      // Partial batch responses (Powertools), bisect on error, bounded retries, then the record's metadata goes to
      // the dead-letter queue and the shard moves on; records are kept 24 h by the stream itself.
      fn.fn.addEventSource(
        new DynamoEventSource(this.data.table, {
          startingPosition: StartingPosition.TRIM_HORIZON,
          batchSize: row.batchSize,
          bisectBatchOnError: true,
          retryAttempts: row.retryAttempts,
          reportBatchItemFailures: true,
          maxRecordAge: Duration.hours(24),
          onFailure: new SqsDlq(this.streamDeadLetters),
          // only the items projections derive from (entities, sort key #): index entries, read models, the limiter's
          // buckets and idempotency records take no room in a batch (shared/routes/stream.ts)
          filters: [FilterCriteria.filter({ dynamodb: { Keys: { SK: { S: row.sortKeys } } } })],
        }),
      );
      this.streamFunctions.set(row, fn);
    }

    // ---- one function per schedule row, run by its EventBridge rule ----
    // Its one table grant is a Query of one index's partitions by leading-key prefix (the data-source sweep:
    // SYNCDUE#<shard> on GSI1, the only cross-tenant read in the service, which sees tenant, source and due time only).
    // A schedule is made only with every queue it sends to (a stack built with a subset of the workers, as some
    // tests build it, has none).
    for (const row of schedules.filter((r) => r.sendsTo.every((q) => this.queues.has(q)))) {
      const fn = new ServiceFunction(this, row.name, {
        handler: row.handler,
        description: row.description,
        rolePath: this.data.rolePath('none'),
        timeout: Duration.seconds(row.timeoutSeconds),
        logRetention: config.logRetention,
        environment: { ...common, TABLE_NAME: this.data.table.tableName },
      });
      fn.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          sid: 'IndexPartitionQuery',
          actions: ['dynamodb:Query'],
          resources: [`${this.data.table.tableArn}/index/${row.reads.index}`],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${row.reads.leadingKeyPrefix}*`] } },
        }),
      );
      this.bindQueues(fn, row.sendsTo, row.name);
      const rule = new Rule(this, `${row.name}Schedule`, {
        description: `Runs ${row.name} every ${row.everyMinutes} minute(s)`,
        schedule: Schedule.rate(Duration.minutes(row.everyMinutes)),
        targets: [new LambdaFunction(fn.fn, { retryAttempts: 2 })],
      });
      Validations.of(rule).acknowledge({ id: 'Serverless-EventBusDLQ', reason: row.missedRun });
      this.scheduleFunctions.set(row, fn);
    }

    if (config.bedrockModelId && !this.bedrockBound) {
      // Not an error: the writer falls back to its built-in implementation without BEDROCK_MODEL_ID.
      Annotations.of(this).addWarningV2(
        'goal-tracking:bedrockUnused',
        'context bedrockModelId is set, but no route or worker row declares the bedrock:invoke need: no function gets the model or the permission to invoke it.',
      );
    }

    // ---- alarms ----
    this.alarms = new ServiceAlarms(this, 'Alarms', { email: config.alarmEmail });
    this.alarms.apiServerErrors(this.api);
    this.alarms.functionThrottles(
      'Throttles',
      [
        ...this.routeFunctions.values(),
        ...this.workerFunctions.values(),
        ...this.streamFunctions.values(),
        ...this.scheduleFunctions.values(),
      ].map((f) => f.fn),
    );
    for (const [row, fn] of this.streamFunctions) {
      this.alarms.workerErrors(`${row.name}Errors`, fn.fn);
      this.alarms.streamLag(row.name === 'StreamProcessor' ? 'StreamLag' : `${row.name}Lag`, fn.fn, DERIVED_STATE_SECONDS);
    }
    this.alarms.deadLetters('StreamDeadLetters', this.streamDeadLetters);
    for (const [w, fn] of this.workerFunctions) this.alarms.workerErrors(`${pascal(w.queue)}WorkerErrors`, fn.fn);
    for (const [q, wq] of this.queues) {
      this.alarms.deadLetters(`${pascal(q)}DeadLetters`, wq.deadLetterQueue);
      this.alarms.queueAge(`${pascal(q)}Age`, q, wq.queue, DERIVED_STATE_SECONDS);
    }
    // the service metrics, every alarm above, and the webhook deliveries' rate and age
    new ServiceDashboard(this, 'Dashboard', {
      alarms: this.alarms.alarms,
      deliveries: { queue: this.queues.get(WEBHOOK_DELIVERY_QUEUE)?.queue, worker: this.workerByQueue(WEBHOOK_DELIVERY_QUEUE)?.fn },
    });

    // ---- operator access (scripts/admin.ts runs with a human's credentials, not in a function) ----
    const operator = new iam.ManagedPolicy(this, 'OperatorPolicy', {
      description:
        'Attach to the operators who run `npm run admin` against this stack: create-tenant writes a new tenant partition, issue-token reads any user and signs with the issuer key.',
      statements: [
        new iam.PolicyStatement({ sid: 'TableWideData', actions: [...TABLE_ACTIONS.write], resources: this.data.dataResources }),
        ...(this.issuerKey
          ? [
              new iam.PolicyStatement({
                sid: 'IssueTokens',
                actions: ['kms:Sign', 'kms:GetPublicKey'],
                resources: [this.issuerKey.key.keyArn],
              }),
            ]
          : []),
      ],
    });

    // ---- outputs: what clients and the operator commands need ----
    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint, description: 'Base URL of the API' });
    new CfnOutput(this, 'IssuerUrl', { value: this.issuerUrl, description: 'Token issuer (ISSUER_URL for npm run admin)' });
    new CfnOutput(this, 'JwtAudience', {
      value: config.jwtAudience.join(','),
      description: 'Accepted token audiences (JWT_AUDIENCE for npm run admin: the first one)',
    });
    new CfnOutput(this, 'TableName', { value: this.data.table.tableName, description: 'DynamoDB table (TABLE_NAME for npm run admin)' });
    new CfnOutput(this, 'Region', { value: this.region, description: 'Region of the stack (AWS_REGION for npm run admin)' });
    if (this.issuerKey)
      new CfnOutput(this, 'IssuerKmsKeyId', {
        value: this.issuerKey.key.keyArn,
        description: 'KMS key that signs tokens (ISSUER_KMS_KEY_ID for npm run admin)',
      });
    new CfnOutput(this, 'EventBusName', {
      value: this.outboundEvents.bus.eventBusName,
      description: 'EventBridge bus receiving every outbound event (source goal-tracking, detail-type = event type)',
    });
    new CfnOutput(this, 'OperatorPolicyArn', { value: operator.managedPolicyArn, description: 'Managed policy to attach to operators' });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarms.topic.topicArn, description: 'SNS topic every alarm notifies' });
    new CfnOutput(this, 'StreamDeadLetterQueueUrl', {
      value: this.streamDeadLetters.queueUrl,
      description: 'On-failure destination of the table stream processor (npm run admin -- redrive)',
    });
    for (const [q, wq] of this.queues) {
      new CfnOutput(this, `${pascal(q)}QueueName`, { value: wq.queue.queueName, description: `Queue ${q}` });
      new CfnOutput(this, `${pascal(q)}DeadLetterQueueName`, {
        value: wq.deadLetterQueue.queueName,
        description: `Dead-letter queue of ${q}`,
      });
    }
  }

  private workerByQueue(queue: string): ServiceFunction | undefined {
    for (const [w, fn] of this.workerFunctions) if (w.queue === queue) return fn;
    return undefined;
  }

  /** The rate limiter's service defaults, for every function that meters a tenant (JWT routes, rate-limited workers). */
  private limitDefaults(config: StackConfig): Record<string, string> {
    return { TENANT_RATE_LIMIT_RPS: String(config.tenantRateLimit.rps), TENANT_RATE_LIMIT_BURST: String(config.tenantRateLimit.burst) };
  }

  private routeGroup(tag: string): NestedStack {
    let group = this.routeGroups.get(tag);
    if (!group) {
      group = new NestedStack(this, `${pascal(tag)}Routes`, { description: `Goal-tracking API: ${tag} routes` });
      this.routeGroups.set(tag, group);
    }
    return group;
  }

  private bindQueues(fn: ServiceFunction, sendsTo: string[], name: string): void {
    for (const q of sendsTo) {
      const queue = this.queues.get(q);
      if (!queue) throw new Error(`${name} sends to queue ${q}, but no worker consumes it (the *Workers lists in shared/routes/)`);
      queue.grantSend(fn);
      fn.addEnvironment(queueUrlEnv(q), queue.queue.queueUrl);
    }
  }

  /** A row's `needs`: each known need maps to exactly one grant; an unknown need fails synthesis. */
  private bindNeeds(fn: ServiceFunction, needs: readonly string[], name: string, config: StackConfig): void {
    for (const need of needs) {
      if (need === 'kms:sign' || need === 'kms:public-key') {
        if (!this.issuerKey)
          throw new Error(`${name} needs ${need}, but the stack has an external issuer (context issuerUrl) and no signing key`);
        if (need === 'kms:sign') this.issuerKey.grantSign(fn);
        else this.issuerKey.grantPublicKey(fn);
        fn.addEnvironment('ISSUER_KMS_KEY_ID', this.issuerKey.key.keyArn);
      } else if (need === 'bedrock:invoke') {
        // Bedrock is optional: without a configured model the function gets neither the model nor the
        // permission, and the document writer uses its built-in implementation.
        if (!config.bedrockModelId) continue;
        fn.addToPolicy(
          new iam.PolicyStatement({
            actions: ['bedrock:InvokeModel'],
            resources: [
              this.formatArn({ service: 'bedrock', account: '', resource: 'foundation-model', resourceName: config.bedrockModelId }),
            ],
          }),
        );
        fn.addEnvironment('BEDROCK_MODEL_ID', config.bedrockModelId);
        this.bedrockBound = true;
      } else if (need === 'support:webhook') {
        // Configuration rather than a grant: only the function that files support issues learns the URL.
        if (config.supportWebhookUrl) fn.addEnvironment('SUPPORT_WEBHOOK_URL', config.supportWebhookUrl);
      } else if (need === 'kms:webhook-secrets') {
        this.outboundEvents.grantSecrets(fn);
        fn.addEnvironment('WEBHOOK_SECRET_KMS_KEY_ID', this.outboundEvents.secretKey.keyArn);
      } else if (need === 'events:publish') {
        this.outboundEvents.grantPublish(fn);
        fn.addEnvironment('EVENT_BUS_NAME', this.outboundEvents.bus.eventBusName);
      } else {
        throw new Error(`${name}: unknown need ${need}`);
      }
    }
  }
}
