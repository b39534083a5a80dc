import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTableInput, TABLE_DEFINITION } from '#shared/db/table.ts';
import { routeName, schedules, type Route, type Worker } from '#shared/routes/index.ts';
import { streamProcessorRow } from '#shared/routes/stream.ts';
import { sqsSender } from '#shared/queue/queue.ts';
import { queueUrlEnv, type GoalTrackingStack } from '../../infra/stack.ts';
import { TABLE_ACTIONS } from '../../infra/constructs/tenant-data.ts';
import { ITEM_WRITE_ACTIONS, OPERATOR_ONLY_LEADING_KEYS } from '#shared/db/table-access.ts';
import {
  allRoutes,
  allWorkers,
  asArray,
  build,
  extraRoutes,
  functionsByDescription,
  logicalId,
  mergedTemplate,
  refId,
  roleStatements,
  type Json,
} from './stack.fixture.ts';
import { LIMITER_ACTIONS, limiterLeaseLeadingKeys } from '#shared/db/rate-limit-store.ts';
import { IMPORT_QUEUE, IMPORT_WORKER_CONCURRENCY } from '#shared/domain/imports/entity.ts';
import { TENANT_TAG_LEADING_KEYS, TENANT_TAG_SHAPE, TENANT_TAG_VARIABLE } from '#shared/db/tenant-scope.ts';

const id = (_stack: unknown, c: Parameters<typeof logicalId>[0]) => logicalId(c);
const dataSourceSweepRow = schedules.find((r) => r.name === 'DataSourceSweep')!;

/** What a row entitles its function to, derived from the row alone: `action resource` pairs. */
function expectedGrants(stack: GoalTrackingStack, row: { kind: 'route'; r: Route } | { kind: 'worker'; w: Worker }): string[] {
  const fn = row.kind === 'route' ? stack.routeFunctions.get(row.r)! : stack.workerFunctions.get(row.w)!;
  const out = [
    `logs:CreateLogStream ${id(stack, fn.logGroup)}`,
    `logs:PutLogEvents ${id(stack, fn.logGroup)}`,
    'xray:PutTelemetryRecords *',
    'xray:PutTraceSegments *',
  ];
  // A JWT route reads its caller's user record before the handler runs: at least read.
  const table = row.kind === 'route' ? (row.r.table === 'none' && row.r.auth === 'jwt' ? 'read' : row.r.table) : row.w.table;
  if (table !== 'none')
    for (const a of ['sts:AssumeRole', 'sts:TagSession'])
      out.push(`${a} ${id(stack, table === 'read' ? stack.data.readRole : stack.data.writeRole)}`);
  const sendsTo = row.kind === 'route' ? row.r.sendsTo : row.w.sendsTo;
  for (const q of sendsTo ?? []) out.push(`sqs:SendMessage ${id(stack, stack.queues.get(q)!.queue)}`);
  if (
    row.kind === 'route' &&
    (row.r.auth === 'jwt' || row.r.door === 'push') &&
    (row.r.method === 'POST' || row.r.doc.list || row.r.listEngine)
  )
    out.push(`kms:GenerateMac ${id(stack, stack.idSeedKey)}`);
  for (const need of row.kind === 'route' ? (row.r.needs ?? []) : [])
    if (need === 'kms:sign' || need === 'kms:public-key')
      out.push(`${need === 'kms:sign' ? 'kms:Sign' : 'kms:GetPublicKey'} ${id(stack, stack.issuerKey!.key)}`);
  for (const need of (row.kind === 'route' ? row.r.needs : row.w.needs) ?? []) {
    if (need === 'kms:webhook-secrets')
      out.push(`kms:Encrypt ${id(stack, stack.outboundEvents.secretKey)}`, `kms:Decrypt ${id(stack, stack.outboundEvents.secretKey)}`);
    if (need === 'events:publish') out.push(`events:PutEvents ${id(stack, stack.outboundEvents.bus)}`);
  }
  if (row.kind === 'worker') {
    const q = id(stack, stack.queues.get(row.w.queue)!.queue);
    for (const a of ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'])
      out.push(`${a} ${q}`);
    if (row.w.sendsEmail)
      out.push(`ses:SendEmail join:${id(stack, stack.mailer.configurationSet)}`, `ses:SendEmail join:${id(stack, stack.mailer.identity)}`);
  }
  return out.sort();
}

/** A resource as a comparable string: a logical id, `*`, or `join:<ids referenced in the Fn::Join>`. */
function resourceKey(r: unknown): string {
  if (r === '*') return '*';
  const j = r as Json;
  if (j && typeof j === 'object' && 'Fn::Join' in j) {
    const ids = (j['Fn::Join'][1] as unknown[])
      .filter((p) => typeof p === 'object' && p && ('Ref' in (p as Json) || 'Fn::GetAtt' in (p as Json)))
      .map(refId)
      .filter((x) => !x.startsWith('AWS::'));
    return `join:${ids.join(',')}`;
  }
  return refId(r);
}

function actualGrants(template: Template, roleId: string): string[] {
  const out: string[] = [];
  for (const s of roleStatements(template, roleId)) {
    expect(s.Effect).toBe('Allow');
    for (const a of asArray(s.Action)) for (const r of asArray(s.Resource)) out.push(`${a} ${resourceKey(r)}`);
  }
  return out.sort();
}

/** What DynamoEventSource grants the processor's role on the table's stream. */
const STREAM_READ = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'];

describe('CDK stack', () => {
  let stack: GoalTrackingStack;
  let template: Template;
  let t: Json;

  beforeAll(() => {
    stack = build().stack;
    template = mergedTemplate(stack);
    t = template.toJSON();
  });

  it('has one HTTP API route per route row, JWT-authorised unless public, each integrated with its own function', () => {
    const apiRoutes = Object.values<Json>(template.findResources('AWS::ApiGatewayV2::Route'));
    expect(apiRoutes).toHaveLength(allRoutes.length);
    const [authorizerId] = Object.keys(template.findResources('AWS::ApiGatewayV2::Authorizer'));
    const fns = functionsByDescription(template);
    const targets = new Set<string>();
    for (const r of allRoutes) {
      const matching = apiRoutes.filter((x) => x.Properties.RouteKey === `${r.method} ${r.path}`);
      expect(matching, `${r.method} ${r.path}`).toHaveLength(1);
      const p = matching[0]!.Properties;
      if (r.auth === 'jwt' && r.door !== 'mcp') {
        expect(p.AuthorizationType, `${r.method} ${r.path}`).toBe('JWT');
        expect(p.AuthorizerId).toEqual({ Ref: authorizerId });
      } else {
        expect(p.AuthorizationType, `${r.method} ${r.path}`).toBe('NONE');
        expect(p.AuthorizerId).toBeUndefined();
      }
      const integrationId = (p.Target['Fn::Join'][1] as unknown[])
        .map(refId)
        .find((x) => t.Resources[x]?.Type === 'AWS::ApiGatewayV2::Integration')!;
      const integration = t.Resources[integrationId].Properties;
      expect(integration.IntegrationType).toBe('AWS_PROXY');
      expect(integration.PayloadFormatVersion).toBe('2.0');
      const fn = fns.get(`${r.method} ${r.path}`)!;
      expect(refId(integration.IntegrationUri)).toBe(fn.id);
      expect(fn.id.startsWith(routeName(r))).toBe(true);
      targets.add(fn.id);
    }
    expect(targets.size).toBe(allRoutes.length); // one function per route
  });

  it('verifies tokens of the stack’s own issuer by default: the API endpoint, the configured audience', () => {
    const [, authorizer] = Object.entries<Json>(template.findResources('AWS::ApiGatewayV2::Authorizer'))[0]!;
    const apiId = Object.keys(template.findResources('AWS::ApiGatewayV2::Api'))[0]!;
    expect(authorizer.Properties).toEqual({
      ApiId: { Ref: apiId },
      AuthorizerType: 'JWT',
      Name: 'JwtAuthorizer',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: { Issuer: { 'Fn::GetAtt': [apiId, 'ApiEndpoint'] }, Audience: ['goal-tracking-api'] },
    });
    // The key that signs: RSA (the JWT authorizer verifies RSA only), never exportable; its id only where a row needs it.
    template.hasResourceProperties('AWS::KMS::Key', { KeySpec: 'RSA_2048', KeyUsage: 'SIGN_VERIFY' });
    for (const [r, fn] of stack.routeFunctions) {
      const env = (t.Resources[id(stack, fn.fn)].Properties.Environment.Variables ?? {}) as Json;
      expect(env.ISSUER_URL).toEqual({ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] });
      // the name the service gives itself (MCP resource, SCIM meta.location): the API, never a request's Host header
      expect(env.API_BASE_URL).toEqual({ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] });
      expect(env.JWT_AUDIENCE).toBe('goal-tracking-api');
      expect('ISSUER_KMS_KEY_ID' in env, `${r.method} ${r.path}`).toBe(
        (r.needs ?? []).some((n) => n === 'kms:sign' || n === 'kms:public-key'),
      );
      expect('WEBHOOK_SECRET_KMS_KEY_ID' in env, `${r.method} ${r.path}`).toBe((r.needs ?? []).includes('kms:webhook-secrets'));
    }
    const jwks = [...stack.routeFunctions.entries()].find(([r]) => r.path === '/.well-known/jwks.json')!;
    expect(actualGrants(template, id(stack, jwks[1].role))).toContain(`kms:GetPublicKey ${id(stack, stack.issuerKey!.key)}`);
  });

  it('builds every function the same way: Node.js 22 arm64 ESM bundle with source maps, X-Ray, its own log group', () => {
    const fns = template.findResources('AWS::Lambda::Function');
    expect(Object.keys(fns)).toHaveLength(allRoutes.length + allWorkers.length + 2); // + the stream processor and the data-source sweep
    for (const [fid, f] of Object.entries<Json>(fns)) {
      const p = f.Properties;
      expect(p.Runtime, fid).toBe('nodejs22.x');
      expect(p.Architectures).toEqual(['arm64']);
      expect(p.Handler).toBe('index.handler');
      expect(p.TracingConfig).toEqual({ Mode: 'Active' });
      expect(p.MemorySize).toBeGreaterThanOrEqual(128);
      expect(p.Timeout).toBeGreaterThan(3);
      expect(p.Environment.Variables).toMatchObject({ NODE_OPTIONS: '--enable-source-maps', POWERTOOLS_SERVICE_NAME: 'goal-tracking' });
      const logGroup = t.Resources[refId(p.LoggingConfig.LogGroup)];
      expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
      expect(logGroup.Properties.RetentionInDays).toBe(30);
      // An explicit role: no AWS managed policy (AWSLambdaBasicExecutionRole would allow logs on every group).
      expect(t.Resources[refId(p.Role)].Properties.ManagedPolicyArns).toBeUndefined();
    }
    for (const [, fn] of stack.routeFunctions) expect(t.Resources[id(stack, fn.fn)].Properties.Timeout).toBe(10);
    for (const [w, fn] of stack.workerFunctions) expect(t.Resources[id(stack, fn.fn)].Properties.Timeout).toBe(w.timeoutSeconds);
  });

  it('gives every function exactly the actions its row declares, nothing more', () => {
    const rows = [...allRoutes.map((r) => ({ kind: 'route' as const, r })), ...allWorkers.map((w) => ({ kind: 'worker' as const, w }))];
    for (const row of rows) {
      const fn = row.kind === 'route' ? stack.routeFunctions.get(row.r)! : stack.workerFunctions.get(row.w)!;
      const label = row.kind === 'route' ? `${row.r.method} ${row.r.path}` : `worker ${row.w.queue}`;
      expect(actualGrants(template, id(stack, fn.role)), label).toEqual(expectedGrants(stack, row));
    }
  });

  it('gives no execution role table data access: functions reach the table only through a tenant role', () => {
    expect(stack.data.tableWideGrants).toEqual([]); // no function needs the table across tenants (operators use OperatorPolicy)
    for (const [rid, role] of Object.entries<Json>(template.findResources('AWS::IAM::Role'))) {
      const trustsLambda = role.Properties.AssumeRolePolicyDocument.Statement.some(
        (s: Json) => s.Principal?.Service === 'lambda.amazonaws.com',
      );
      if (!trustsLambda) continue;
      // The stream processor reads the table's change stream (not its items) with its own role: the event source mapping polls with it.
      const isProcessor = rid === id(stack, stack.streamFunctions.get(streamProcessorRow)!.role);
      // The data-source sweep Queries the due index's partitions only (below), no tenant's items.
      if (rid === id(stack, stack.scheduleFunctions.get(dataSourceSweepRow)!.role)) continue;
      const actions = roleStatements(template, rid)
        .flatMap((s) => asArray(s.Action))
        .filter((a) => !(isProcessor && STREAM_READ.includes(a)));
      expect(
        actions.filter((a) => a.startsWith('dynamodb:')),
        rid,
      ).toEqual([]);
    }
  });

  it('feeds the stream processor from the table stream (both images): partial failures, bisect, bounded retries, an SQS on-failure destination', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', { StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' } });
    const mappings = Object.values<Json>(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map((m) => m.Properties)
      .filter((p) => p.EventSourceArn?.['Fn::GetAtt']?.[1] === 'StreamArn');
    expect(mappings).toHaveLength(1);
    const m = mappings[0]!;
    expect(refId(m.FunctionName)).toBe(id(stack, stack.streamFunctions.get(streamProcessorRow)!.fn));
    expect(m).toMatchObject({
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      StartingPosition: 'TRIM_HORIZON',
    });
    expect(m.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0]).toBe(id(stack, stack.streamDeadLetters));
    // Stream reads only on the stream, and the processor reaches items through the write tenant role like any function.
    const actions = roleStatements(template, id(stack, stack.streamFunctions.get(streamProcessorRow)!.role))
      .flatMap((s) => asArray(s.Action))
      .filter((a) => a.startsWith('dynamodb:'));
    expect([...new Set(actions)].sort()).toEqual([...STREAM_READ].sort());
    // Records are read on the stream only (ListStreams takes no resource).
    for (const st of roleStatements(template, id(stack, stack.streamFunctions.get(streamProcessorRow)!.role)).filter((s) =>
      asArray(s.Action).includes('dynamodb:GetRecords'),
    ))
      expect(JSON.stringify(st.Resource)).toContain('StreamArn');
    expect(stack.streamFunctions.get(streamProcessorRow)!.rolePath).toBe(stack.data.rolePath('write'));
  });

  it('runs the data-source sweep every minute with one grant: Query of the due index partitions on GSI1, and a send to the sync queue', () => {
    const sweep = stack.scheduleFunctions.get(dataSourceSweepRow)!;
    const statements = roleStatements(template, id(stack, sweep.role));
    const dynamo = statements.filter((st) => asArray(st.Action).some((a) => a.startsWith('dynamodb:')));
    expect(dynamo).toHaveLength(1);
    expect(asArray(dynamo[0]!.Action)).toEqual(['dynamodb:Query']);
    expect(JSON.stringify(dynamo[0]!.Resource)).toContain('/index/GSI1');
    expect(dynamo[0]!.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['SYNCDUE#*'] } });
    expect(actualGrants(template, id(stack, sweep.role))).toContain(
      `sqs:SendMessage ${id(stack, stack.queues.get('data-source-syncs')!.queue)}`,
    );
    expect(actualGrants(template, id(stack, sweep.role)).some((g) => g.startsWith('sts:'))).toBe(false); // no tenant role
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Targets: Match.arrayWith([Match.objectLike({ Arn: { 'Fn::GetAtt': [id(stack, sweep.fn), 'Arn'] } })]),
    });
  });

  it('sends outbound events to its own EventBridge bus and seals webhook secrets with its own KMS key, granted only where a row needs them', () => {
    template.hasResourceProperties('AWS::Events::EventBus', {});
    template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      Description: Match.stringLikeRegexp('webhook signing secrets'),
    });
    const busId = id(stack, stack.outboundEvents.bus);
    const keyId = id(stack, stack.outboundEvents.secretKey);
    const processorEnv = t.Resources[id(stack, stack.streamFunctions.get(streamProcessorRow)!.fn)].Properties.Environment.Variables as Json;
    expect(refId(processorEnv.EVENT_BUS_NAME)).toBe(busId);
    expect(actualGrants(template, id(stack, stack.streamFunctions.get(streamProcessorRow)!.role))).toContain(`events:PutEvents ${busId}`);
    expect(actualGrants(template, id(stack, stack.streamFunctions.get(streamProcessorRow)!.role))).toContain(
      `sqs:SendMessage ${id(stack, stack.queues.get('webhook-deliveries')!.queue)}`,
    );
    const sealing = [...stack.routeFunctions.entries(), ...stack.workerFunctions.entries()].filter(([row]) =>
      row.needs?.includes('kms:webhook-secrets'),
    );
    expect(sealing.map(([row]) => ('path' in row ? `${row.method} ${row.path}` : row.queue)).sort()).toEqual([
      'POST /data_sources',
      'POST /webhooks',
      'PUT /data_sources/{id}',
      'data-source-syncs',
      'webhook-deliveries',
    ]);
    for (const [, fn] of sealing)
      expect(actualGrants(template, id(stack, fn.role))).toEqual(expect.arrayContaining([`kms:Encrypt ${keyId}`, `kms:Decrypt ${keyId}`]));
    const others = [...stack.routeFunctions.values(), ...stack.workerFunctions.values()].filter((fn) => !sealing.some(([, f]) => f === fn));
    for (const fn of others)
      expect(actualGrants(template, id(stack, fn.role)).filter((g) => g.endsWith(keyId) || g.endsWith(busId))).toEqual([]);
  });

  it("keys idempotent requests' ids and list cursors with an HMAC key of its own, usable (GenerateMac only) by the authenticated POST and list routes", () => {
    template.hasResourceProperties('AWS::KMS::Key', { KeySpec: 'HMAC_256', KeyUsage: 'GENERATE_VERIFY_MAC' });
    const keyId = id(stack, stack.idSeedKey);
    for (const [route, fn] of stack.routeFunctions) {
      const post = (route.auth === 'jwt' || route.door === 'push') && (route.method === 'POST' || !!route.doc.list || !!route.listEngine);
      // SCIM's lists page with the list engine, which signs next_cursor: without the key a second page is a 500 deployed
      if (route.method === 'GET' && (route.path === '/scim/v2/Users' || route.path === '/scim/v2/Groups'))
        expect(post, `${route.method} ${route.path}`).toBe(true);
      const env = t.Resources[id(stack, fn.fn)].Properties.Environment.Variables as Json;
      expect(env.ID_SEED_KMS_KEY_ID === undefined ? undefined : refId(env.ID_SEED_KMS_KEY_ID), `${route.method} ${route.path}`).toBe(
        post ? keyId : undefined,
      );
      expect(actualGrants(template, id(stack, fn.role)).filter((g) => g.endsWith(keyId))).toEqual(post ? [`kms:GenerateMac ${keyId}`] : []);
    }
  });

  it('has two tenant roles: read and write actions on the table and each index by name, on the tagged tenant’s keys, assumable only by roles on their path with the tag', () => {
    const tableId = id(stack, stack.data.table);
    const resources = [tableId, `join:${tableId}`];
    for (const [access, role] of [
      ['read', stack.data.readRole],
      ['write', stack.data.writeRole],
    ] as const) {
      const roleId = id(stack, role);
      const all = roleStatements(template, roleId);
      // The read role also updates the rate limiter's bucket shards (not rl#config): a GET leases tokens too.
      const limiter = all.filter((s) => s.Sid === 'RateLimitLeases');
      expect(limiter).toHaveLength(access === 'read' ? 1 : 0);
      if (access === 'read') {
        expect(asArray(limiter[0]!.Action)).toEqual([...LIMITER_ACTIONS]);
        expect(limiter[0]!.Condition).toEqual({
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': limiterLeaseLeadingKeys(TENANT_TAG_VARIABLE) },
        });
      }
      // The write role is denied the operator's items (rl#config): an Allow on T#<tenant>#* cannot leave them out.
      const denied = all.filter((s) => s.Sid === 'OperatorOnlyItems');
      expect(denied).toHaveLength(access === 'write' ? 1 : 0);
      if (access === 'write') {
        expect(denied[0]!.Effect).toBe('Deny');
        expect(asArray(denied[0]!.Action).sort()).toEqual([...ITEM_WRITE_ACTIONS].sort());
        expect(denied[0]!.Condition).toEqual({ 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': OPERATOR_ONLY_LEADING_KEYS } });
      }
      const statements = all.filter((s) => s.Sid !== 'RateLimitLeases' && s.Sid !== 'OperatorOnlyItems');
      expect(statements).toHaveLength(1);
      expect(asArray(statements[0]!.Action).sort()).toEqual([...TABLE_ACTIONS[access]].sort());
      expect(asArray(statements[0]!.Resource).map(resourceKey).sort()).toEqual(resources.sort());
      expect(statements[0]!.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [TENANT_TAG_LEADING_KEYS] } });
      const indexArns = asArray(statements[0]!.Resource).filter((r) => (r as Json)['Fn::Join']);
      expect(indexArns.map((r) => (r as Json)['Fn::Join'][1][1])).toEqual(
        TABLE_DEFINITION.globalSecondaryIndexes.map((g) => `/index/${g.indexName}`),
      );

      const trust = t.Resources[roleId].Properties.AssumeRolePolicyDocument.Statement;
      expect(trust).toHaveLength(1);
      expect(trust[0].Action).toEqual(['sts:AssumeRole', 'sts:TagSession']);
      expect(trust[0].Condition.StringLike).toEqual({ 'aws:RequestTag/tenant': TENANT_TAG_SHAPE });
      expect(JSON.stringify(trust[0].Principal)).toContain(':root');
      const pattern = trust[0].Condition.ArnLike['aws:PrincipalArn']['Fn::Join'][1].at(-1);
      expect(pattern).toBe(`:role/goal-tracking/${stack.stackName}/tenant-${access}/*`);
      expect(t.Resources[roleId].Properties.MaxSessionDuration).toBe(3600);
    }
    // Every function's role path matches the tenant role it assumes (and only that one).
    for (const [r, fn] of stack.routeFunctions) {
      const path = t.Resources[id(stack, fn.role)].Properties.Path;
      const access = r.table === 'none' ? (r.auth === 'jwt' ? 'read' : 'none') : r.table;
      expect(path, `${r.method} ${r.path}`).toBe(
        access === 'none' ? `/goal-tracking/${stack.stackName}/` : `/goal-tracking/${stack.stackName}/tenant-${access}/`,
      );
    }
  });

  it('builds the table from TABLE_DEFINITION, exactly the keys and indexes DynamoDB Local gets', () => {
    const tables = Object.values<Json>(template.findResources('AWS::DynamoDB::Table'));
    expect(tables).toHaveLength(1);
    const table = tables[0]!;
    const local = createTableInput('local');
    const p = table.Properties;
    expect(p.KeySchema).toEqual(local.KeySchema);
    const byName = (a: Array<{ AttributeName: string }>) => [...a].sort((x, y) => x.AttributeName.localeCompare(y.AttributeName));
    expect(byName(p.AttributeDefinitions)).toEqual(byName(local.AttributeDefinitions));
    expect(p.GlobalSecondaryIndexes).toEqual(local.GlobalSecondaryIndexes);
    expect(p.BillingMode).toBe(local.BillingMode);
    expect(p.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(p.DeletionProtectionEnabled).toBe(true);
    expect(p.TimeToLiveSpecification).toEqual({ AttributeName: TABLE_DEFINITION.ttlAttribute, Enabled: true });
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
  });

  it('gives every queue a dead-letter queue with redrive, SSE and an SSL-only policy, and its worker partial batch responses', () => {
    const queues = template.findResources('AWS::SQS::Queue');
    expect(Object.keys(queues)).toHaveLength(allWorkers.length * 2 + 1); // + the stream processor's on-failure destination
    const policies = Object.values<Json>(template.findResources('AWS::SQS::QueuePolicy'));
    const sslOnly = (qid: string) =>
      policies.some(
        (p) =>
          p.Properties.Queues.some((q: Json) => q.Ref === qid) &&
          p.Properties.PolicyDocument.Statement.some(
            (s: Json) => s.Effect === 'Deny' && s.Condition?.Bool?.['aws:SecureTransport'] === 'false' && s.Action === 'sqs:*',
          ),
      );
    for (const w of allWorkers) {
      const wq = stack.queues.get(w.queue)!;
      const q = queues[id(stack, wq.queue)]!.Properties;
      const dlqId = id(stack, wq.deadLetterQueue);
      const dlq = queues[dlqId]!.Properties;
      expect(q.RedrivePolicy, w.queue).toEqual({
        deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] },
        maxReceiveCount: w.maxReceiveCount,
      });
      expect(q.SqsManagedSseEnabled).toBe(true);
      expect(dlq.SqsManagedSseEnabled).toBe(true);
      expect(sslOnly(id(stack, wq.queue))).toBe(true);
      expect(sslOnly(dlqId)).toBe(true);
      expect(q.VisibilityTimeout).toBeGreaterThanOrEqual(6 * w.timeoutSeconds);

      const fnId = id(stack, stack.workerFunctions.get(w)!.fn);
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: fnId },
        EventSourceArn: { 'Fn::GetAtt': [id(stack, wq.queue), 'Arn'] },
        BatchSize: w.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
    }
    expect(Object.keys(template.findResources('AWS::Lambda::EventSourceMapping'))).toHaveLength(allWorkers.length + 1); // + the table stream
    const streamDlq = id(stack, stack.streamDeadLetters);
    expect(queues[streamDlq]!.Properties.SqsManagedSseEnabled).toBe(true);
    expect(sslOnly(streamDlq)).toBe(true);
  });

  it('caps the import worker at IMPORT_WORKER_CONCURRENCY invocations (SQS maximum concurrency) and gives it the limiter defaults', () => {
    const imports = allWorkers.find((w) => w.queue === IMPORT_QUEUE)!;
    const mappingOf = (w: Worker) =>
      Object.values<Json>(template.findResources('AWS::Lambda::EventSourceMapping')).find(
        (m) => m.Properties.FunctionName?.Ref === id(stack, stack.workerFunctions.get(w)!.fn),
      )!.Properties;
    // One tenant's imports cannot take the account's Lambda concurrency and the table's capacity from everyone else's.
    expect(mappingOf(imports).ScalingConfig).toEqual({ MaximumConcurrency: IMPORT_WORKER_CONCURRENCY });
    expect(IMPORT_WORKER_CONCURRENCY).toBeGreaterThanOrEqual(2); // SQS's least
    for (const w of allWorkers) expect(mappingOf(w).ScalingConfig, w.queue).toEqual({ MaximumConcurrency: w.maxConcurrency });
    // its rows are charged to the tenant's limit with the same service defaults the routes use
    const env = t.Resources[id(stack, stack.workerFunctions.get(imports)!.fn)].Properties.Environment.Variables;
    expect(env).toMatchObject({ TENANT_RATE_LIMIT_RPS: expect.any(String), TENANT_RATE_LIMIT_BURST: expect.any(String) });
    // and it continues a paused import through its own queue
    expect(env[queueUrlEnv(IMPORT_QUEUE)]).toEqual({ Ref: id(stack, stack.queues.get(IMPORT_QUEUE)!.queue) });
  });

  it('names each queue a function sends to in QUEUE_URL_<NAME>, the variable sqsSender reads', async () => {
    const senders = [
      ...allRoutes.filter((r) => r.sendsTo?.length).map((r) => [r.sendsTo!, stack.routeFunctions.get(r)!] as const),
      ...allWorkers.filter((w) => w.sendsTo?.length).map((w) => [w.sendsTo!, stack.workerFunctions.get(w)!] as const),
    ];
    expect(senders.length).toBeGreaterThan(0);
    for (const [queues, fn] of senders) {
      const env = t.Resources[id(stack, fn.fn)].Properties.Environment.Variables;
      for (const q of queues) {
        expect(env[queueUrlEnv(q)]).toEqual({ Ref: id(stack, stack.queues.get(q)!.queue) });
        // The name infra sets is the name the runtime reads.
        process.env[queueUrlEnv(q)] = 'https://sqs.test/q';
        const sent: unknown[] = [];
        await sqsSender({ send: async (cmd: { input: unknown }) => (sent.push(cmd.input), { MessageId: 'm' }) } as never).send(q, { x: 1 });
        expect(sent).toEqual([{ QueueUrl: 'https://sqs.test/q', MessageBody: '{"x":1}', DelaySeconds: undefined }]);
        delete process.env[queueUrlEnv(q)];
      }
    }
  });

  it('lets only e-mail workers send, from the configured address, through the configuration set', () => {
    template.resourceCountIs('AWS::SES::EmailIdentity', 1);
    template.hasResourceProperties('AWS::SES::EmailIdentity', { EmailIdentity: 'noreply@example.com' });
    template.hasResourceProperties('AWS::SES::ConfigurationSet', {
      DeliveryOptions: { TlsPolicy: 'REQUIRE' },
      SuppressionOptions: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'] },
    });
    for (const [w, fn] of stack.workerFunctions) {
      const env = t.Resources[id(stack, fn.fn)].Properties.Environment.Variables;
      const statements = roleStatements(template, id(stack, fn.role)).filter((s) => asArray(s.Action).includes('ses:SendEmail'));
      if (w.sendsEmail) {
        expect(env.EMAIL_FROM).toBe('noreply@example.com');
        expect(env.SES_CONFIGURATION_SET).toEqual({ Ref: id(stack, stack.mailer.configurationSet) });
        expect(statements).toHaveLength(1);
        expect(statements[0]!.Condition).toEqual({ StringEquals: { 'ses:FromAddress': 'noreply@example.com' } });
      } else {
        expect(env.EMAIL_FROM).toBeUndefined();
        expect(statements).toHaveLength(0);
      }
    }
  });

  it('logs every request as JSON and throttles the stage', () => {
    const stages = Object.values<Json>(template.findResources('AWS::ApiGatewayV2::Stage'));
    expect(stages).toHaveLength(1);
    const s = stages[0]!.Properties;
    expect(s.StageName).toBe('$default');
    expect(s.AutoDeploy).toBe(true);
    expect(s.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 });
    const format = JSON.parse(s.AccessLogSettings.Format);
    expect(format).toMatchObject({
      request_id: '$context.requestId',
      status: '$context.status',
      route: '$context.routeKey',
      authorizer_error: '$context.authorizer.error',
    });
    expect(t.Resources[refId(s.AccessLogSettings.DestinationArn)].Properties.RetentionInDays).toBe(30);
  });

  it('alarms on 5xx, throttles of every function, worker errors, stream lag and dead letters, all to the alarm topic', () => {
    const alarms = Object.values<Json>(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
    const topicId = id(stack, stack.alarms.topic);
    for (const a of alarms) {
      expect(a.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(a.TreatMissingData).toBe('notBreaching');
      expect(a.AlarmDescription).toBeTruthy();
    }
    expect(alarms.filter((a) => a.MetricName === '5xx' && a.Namespace === 'AWS/ApiGateway')).toHaveLength(1);
    // the stream processor more than a minute behind
    expect(
      alarms.filter(
        (a) =>
          a.MetricName === 'IteratorAge' &&
          a.Namespace === 'AWS/Lambda' &&
          a.Statistic === 'Maximum' &&
          a.Threshold === 60_000 &&
          refId(a.Dimensions[0].Value) === id(stack, stack.streamFunctions.get(streamProcessorRow)!.fn),
      ),
    ).toHaveLength(1);
    // Throttles: every function appears in exactly one alarm's metric math (at most 10 per alarm).
    const throttled = alarms.flatMap((a) =>
      (a.Metrics ?? [])
        .filter((m: Json) => m.MetricStat?.Metric?.MetricName === 'Throttles')
        .map((m: Json) => refId(m.MetricStat.Metric.Dimensions[0].Value)),
    );
    const allFns = Object.keys(template.findResources('AWS::Lambda::Function'));
    expect(throttled.sort()).toEqual(allFns.sort());
    for (const a of alarms.filter((x) => x.Metrics)) expect(a.Metrics.length).toBeLessThanOrEqual(11);
    for (const [, fn] of stack.workerFunctions) {
      expect(
        alarms.some((a) => a.MetricName === 'Errors' && a.Namespace === 'AWS/Lambda' && refId(a.Dimensions[0].Value) === id(stack, fn.fn)),
      ).toBe(true);
    }
    for (const [q, wq] of stack.queues) {
      expect(
        alarms.some(
          (a) =>
            a.MetricName === 'ApproximateNumberOfMessagesVisible' &&
            a.Dimensions[0].Value['Fn::GetAtt']?.[0] === id(stack, wq.deadLetterQueue),
        ),
        q,
      ).toBe(true);
    }
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
  });

  it('outputs what clients and the operator commands need', () => {
    const outputs = template.toJSON().Outputs as Json;
    for (const name of [
      'ApiUrl',
      'IssuerUrl',
      'JwtAudience',
      'TableName',
      'Region',
      'IssuerKmsKeyId',
      'OperatorPolicyArn',
      'AlarmTopicArn',
    ])
      expect(outputs[name], name).toBeDefined();
    expect(outputs.TableName.Value).toEqual({ Ref: id(stack, stack.data.table) });
    expect(outputs.IssuerKmsKeyId.Value).toEqual({ 'Fn::GetAtt': [id(stack, stack.issuerKey!.key), 'Arn'] });
    for (const [q, wq] of stack.queues) {
      const names = Object.values<Json>(outputs).map((o) => o.Value);
      expect(names, q).toContainEqual({ 'Fn::GetAtt': [id(stack, wq.queue), 'QueueName'] });
      expect(names, q).toContainEqual({ 'Fn::GetAtt': [id(stack, wq.deadLetterQueue), 'QueueName'] });
    }
    // The operator policy: table-wide data access and the issuer key, nothing else.
    const operator = Object.values<Json>(template.findResources('AWS::IAM::ManagedPolicy'))[0]!.Properties.PolicyDocument.Statement;
    expect(operator.flatMap((s: Json) => asArray(s.Action)).sort()).toEqual(
      [...TABLE_ACTIONS.write, 'kms:Sign', 'kms:GetPublicKey'].sort(),
    );
  });
});

describe('CDK stack with an external issuer (e.g. a Cognito user pool)', () => {
  const issuerUrl = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Example';
  const routes = allRoutes.filter((r) => !r.needs?.includes('kms:sign'));

  it('verifies that issuer’s tokens, drops the self-issuer routes and the signing key, and passes the claim names on', () => {
    const { stack } = build({
      routes,
      context: { issuerUrl, jwtAudience: 'client-a,client-b', tenantClaim: 'custom:tenant_uuid', userClaim: 'custom:user_uuid' },
    });
    const template = mergedTemplate(stack);
    template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      JwtConfiguration: { Issuer: issuerUrl, Audience: ['client-a', 'client-b'] },
    });
    template.resourceCountIs('AWS::KMS::Key', 3); // the alarm topic's key, the webhook-secret key and the id-seed key, no signing key
    const keys = Object.keys(template.toJSON().Resources).filter((k) => k.startsWith('IssuerKey'));
    expect(keys).toEqual([]);
    const routeKeys = Object.values<Json>(template.findResources('AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey);
    expect(routeKeys.filter((k) => k.includes('/.well-known/'))).toEqual([]);
    expect(routeKeys).toContain('GET /openapi.json');
    for (const [, fn] of stack.routeFunctions) {
      const env = template.toJSON().Resources[logicalId(fn.fn)].Properties.Environment.Variables;
      expect(env.API_BASE_URL).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^Api/), 'ApiEndpoint'] }); // the API, not the other issuer
      expect(env).toMatchObject({
        ISSUER_URL: issuerUrl,
        JWT_AUDIENCE: 'client-a',
        TENANT_CLAIM: 'custom:tenant_uuid',
        USER_CLAIM: 'custom:user_uuid',
      });
    }
    expect(template.toJSON().Outputs.IssuerKmsKeyId).toBeUndefined();
  });

  it('refuses a route that needs the signing key when there is none', () => {
    expect(() => build({ routes: extraRoutes, context: { issuerUrl } })).toThrow(/needs kms:sign/);
  });
});

describe('CDK stack configuration', () => {
  it('takes sender, limits, retention and the Bedrock model from context', () => {
    const bedrockRoute: Route = { ...extraRoutes[0]!, path: '/fixture/writer', sendsTo: [], needs: ['bedrock:invoke' as never] };
    const { stack } = build({
      routes: [bedrockRoute],
      context: {
        emailFrom: 'okr@mail.example.org',
        emailIdentity: 'mail.example.org',
        throttleRateLimit: '20',
        throttleBurstLimit: 40,
        tenantRateLimitRps: '5',
        tenantRateLimitBurst: '10',
        logRetentionDays: '90',
        bedrockModelId: 'anthropic.claude-3-haiku-20240307-v1:0',
        supportWebhookUrl: 'https://support.example.org/hook',
      },
    });
    const template = mergedTemplate(stack);
    template.hasResourceProperties('AWS::SES::EmailIdentity', { EmailIdentity: 'mail.example.org' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 },
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
    const fn = stack.routeFunctions.get(bedrockRoute)!;
    const t = template.toJSON();
    expect(t.Resources[logicalId(fn.fn)].Properties.Environment.Variables).toMatchObject({
      BEDROCK_MODEL_ID: 'anthropic.claude-3-haiku-20240307-v1:0',
      TENANT_RATE_LIMIT_RPS: '5',
      TENANT_RATE_LIMIT_BURST: '10',
    });
    const bedrock = roleStatements(template, logicalId(fn.role)).filter((s) => asArray(s.Action).includes('bedrock:InvokeModel'));
    expect(bedrock).toHaveLength(1);
    expect(JSON.stringify(bedrock[0]!.Resource)).toContain('::foundation-model/anthropic.claude-3-haiku-20240307-v1:0');
    // only the worker that files support issues learns the webhook URL
    for (const [w, wf] of stack.workerFunctions) {
      const env = t.Resources[logicalId(wf.fn)].Properties.Environment.Variables;
      expect(env.SUPPORT_WEBHOOK_URL, w.queue).toBe(w.needs?.includes('support:webhook') ? 'https://support.example.org/hook' : undefined);
    }
    expect([...stack.workerFunctions.keys()].some((w) => w.needs?.includes('support:webhook'))).toBe(true);
    // a worker that meters tenants gets the same limit defaults as the routes
    for (const [w, wf] of stack.workerFunctions) {
      const env = t.Resources[logicalId(wf.fn)].Properties.Environment.Variables;
      expect(env.TENANT_RATE_LIMIT_RPS, w.queue).toBe(w.rateLimited ? '5' : undefined);
    }
  });

  it('treats Bedrock as optional: without a model, a row that needs it gets neither the model nor the permission', () => {
    const bedrockRoute: Route = { ...extraRoutes[0]!, path: '/fixture/writer', sendsTo: [], needs: ['bedrock:invoke' as never] };
    const { stack } = build({ routes: [bedrockRoute] });
    const template = mergedTemplate(stack);
    const fn = stack.routeFunctions.get(bedrockRoute)!;
    expect(template.toJSON().Resources[logicalId(fn.fn)].Properties.Environment.Variables.BEDROCK_MODEL_ID).toBeUndefined();
    expect(roleStatements(template, logicalId(fn.role)).flatMap((s) => asArray(s.Action))).not.toContain('bedrock:InvokeModel');
  });

  it('fails synthesis on malformed configuration instead of deploying it', () => {
    expect(() => build({ context: { emailFrom: 'not-an-address' } })).toThrow(/emailFrom/);
    expect(() => build({ context: { issuerUrl: 'http://insecure.example' } })).toThrow(/issuerUrl/);
    expect(() => build({ context: { throttleRateLimit: 'fast' } })).toThrow(/throttleRateLimit/);
    expect(() => build({ context: { logRetentionDays: 31 } })).toThrow(/logRetentionDays/);
    expect(() => build({ context: { emailIdentity: 'other.example' } })).toThrow(/emailIdentity/);
    expect(() => build({ workers: [...allWorkers, allWorkers[0]!] })).toThrow(/two workers consume/);
    expect(() => build({ routes: [{ ...extraRoutes[0]!, sendsTo: ['nowhere'] }] })).toThrow(/no worker consumes/);
  });
});
