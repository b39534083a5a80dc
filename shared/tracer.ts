import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import type { MiddlewareObj } from '@middy/core';
import { contextValue, enterContextValue } from '#shared/request-context.ts';

/**
 * X-Ray tracing for the functions, written out instead of bundling the Powertools tracer: that one pulls in
 * the X-Ray SDK (aws-xray-sdk-core, cls-hooked, semver: ~120 KB of every bundle and ~25 ms of every cold
 * start). It emits what the Powertools tracer did for us (docs/deploy.md, "Tracing"):
 * - per invocation a `## <_HANDLER>` subsegment under the Lambda function's segment, annotated `ColdStart`
 *   and `Service`, with the error (fault, cause) when the handler fails;
 * - per AWS SDK call of an instrumented client a subsegment named for the service (`DynamoDB`) in the `aws`
 *   namespace (under the handler subsegment, or under the function's segment where there is none: workers) with operation, region, request id, retries, table name and HTTP status, flagged
 *   throttle/error/fault as the X-Ray SDK flags them, and the trace header passed on to the service.
 * Documents go to the X-Ray daemon the Lambda runtime runs (AWS_XRAY_DAEMON_ADDRESS) over UDP, only for
 * sampled requests, only in Lambda. Locally (no Lambda environment) every call is a no-op.
 */

interface Subsegment {
  id: string;
  name: string;
  trace_id: string;
  parent_id: string;
  start_time: number;
  end_time?: number;
  namespace?: 'aws';
  annotations?: Record<string, string | number | boolean>;
  aws?: Record<string, unknown>;
  http?: { response?: { status?: number; content_length?: number } };
  fault?: boolean;
  error?: boolean;
  throttle?: boolean;
  cause?: { working_directory: string; exceptions: CapturedException[] };
}

interface CapturedException {
  id: string;
  message: string;
  type: string;
  remote: boolean;
  stack: Array<{ path: string; line: number; label: string }>;
}

interface TraceHeader {
  root: string;
  parent: string;
  sampled: boolean;
  /** Fields beyond Root/Parent/Sampled (e.g. Lineage), passed on to downstream calls as they came. */
  extra: string[];
}

/** The invocation's trace and its handler subsegment, the parent of the SDK calls made under it. */
export interface ActiveTrace {
  trace: TraceHeader;
  segment: Subsegment;
}

const serviceName = process.env.POWERTOOLS_SERVICE_NAME ?? 'goal-tracking';
let coldStart = true;
let socket: Socket | undefined;

/** The X-Ray SDK's Lambda check, as Powertools makes it: in Lambda, unless disabled or under SAM/Amplify mocks. */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.POWERTOOLS_TRACE_ENABLED?.toLowerCase() === 'false') return false;
  if (env.AWS_SAM_LOCAL === 'true' || env.AWS_EXECUTION_ENV === 'AWS_Lambda_amplify-mock') return false;
  return env.AWS_LAMBDA_FUNCTION_NAME !== undefined;
}

/** The invocation's trace header, from the runtime's per-invocation store or `_X_AMZN_TRACE_ID`. */
export function parseTraceHeader(raw: string | undefined): TraceHeader | undefined {
  if (!raw) return undefined;
  const fields = new Map<string, string>();
  const extra: string[] = [];
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    if (key === 'Root' || key === 'Parent' || key === 'Sampled') fields.set(key, part.slice(eq + 1).trim());
    else extra.push(part.trim());
  }
  const root = fields.get('Root');
  const parent = fields.get('Parent');
  if (!root || !parent) return undefined;
  return { root, parent, sampled: fields.get('Sampled') === '1', extra };
}

function invocationTrace(): TraceHeader | undefined {
  const store = (globalThis as { awslambda?: { InvokeStore?: { getXRayTraceId(): string | undefined } } }).awslambda?.InvokeStore;
  return parseTraceHeader(store?.getXRayTraceId() ?? process.env._X_AMZN_TRACE_ID);
}

/** `udp:host:port tcp:host:port` or `host:port` (the Lambda runtime sets the latter). */
function daemonAddress(): { host: string; port: number } {
  const raw = process.env.AWS_XRAY_DAEMON_ADDRESS ?? '127.0.0.1:2000';
  const udp =
    raw
      .split(/\s+/)
      .find((p) => p.startsWith('udp:'))
      ?.slice(4) ?? raw.split(/\s+/)[0]!;
  const colon = udp.lastIndexOf(':');
  return { host: udp.slice(0, colon), port: Number(udp.slice(colon + 1)) };
}

const newId = () => randomBytes(8).toString('hex');
const now = () => Date.now() / 1000;

function send(segment: Subsegment): void {
  const { host, port } = daemonAddress();
  socket ??= createSocket('udp4').unref();
  const message = `{"format":"json","version":1}\n${JSON.stringify({ ...segment, type: 'subsegment' })}`;
  socket.send(message, port, host, () => undefined); // best effort, as the X-Ray SDK: a lost trace never fails a request
}

function open(name: string, trace: TraceHeader, parentId: string): Subsegment {
  return { id: newId(), name, trace_id: trace.root, parent_id: parentId, start_time: now() };
}

function close(segment: Subsegment): void {
  segment.end_time = now();
  send(segment);
}

/** The X-Ray SDK's CapturedException: message, type and the parsed stack. */
function capturedException(err: unknown, remote: boolean): CapturedException {
  const e =
    typeof err === 'string' ? { message: err, name: '', stack: undefined } : (err as { message?: string; name?: string; stack?: string });
  const stack = (e.stack ?? '')
    .split('\n')
    .slice(1)
    .map((frame) => {
      const line = frame.trim().replace(/\(|\)/g, '');
      const rest = line.slice(line.indexOf(' ') + 1);
      const space = rest.lastIndexOf(' ');
      const [path = '', lineNo = ''] = (space >= 0 ? rest.slice(space + 1) : rest).split(':');
      return { path, line: parseInt(lineNo, 10), label: space >= 0 ? rest.slice(0, space) : 'anonymous' };
    });
  return { id: newId(), message: String(e.message ?? ''), type: String(e.name ?? ''), remote, stack };
}

function addError(segment: Subsegment, err: unknown, remote: boolean): void {
  segment.fault = true;
  segment.cause ??= { working_directory: process.cwd(), exceptions: [] };
  segment.cause.exceptions.unshift(capturedException(err, remote));
}

/** The request and response fields the X-Ray SDK's whitelist records for the DynamoDB operations we call. */
const DYNAMODB_FIELDS: Record<string, { request: string[]; response: string[]; tableNames?: true }> = {
  GetItem: { request: ['ConsistentRead', 'ProjectionExpression', 'TableName'], response: ['ConsumedCapacity'] },
  Query: {
    request: ['AttributesToGet', 'ConsistentRead', 'IndexName', 'Limit', 'ProjectionExpression', 'ScanIndexForward', 'Select', 'TableName'],
    response: ['ConsumedCapacity'],
  },
  Scan: {
    request: [
      'AttributesToGet',
      'ConsistentRead',
      'IndexName',
      'Limit',
      'ProjectionExpression',
      'Segment',
      'Select',
      'TableName',
      'TotalSegments',
    ],
    response: ['ConsumedCapacity', 'Count', 'ScannedCount'],
  },
  PutItem: { request: ['TableName'], response: ['ConsumedCapacity', 'ItemCollectionMetrics'] },
  UpdateItem: { request: ['TableName'], response: ['ConsumedCapacity', 'ItemCollectionMetrics'] },
  DeleteItem: { request: ['TableName'], response: ['ConsumedCapacity', 'ItemCollectionMetrics'] },
  BatchGetItem: { request: [], response: ['ConsumedCapacity'], tableNames: true },
  BatchWriteItem: { request: [], response: ['ConsumedCapacity', 'ItemCollectionMetrics'], tableNames: true },
};

const snakeCase = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

function awsAttributes(
  service: string,
  operation: string,
  region: string | undefined,
  input: Record<string, unknown>,
  output: Record<string, unknown> | undefined,
  meta: { requestId?: string; attempts?: number },
) {
  const aws: Record<string, unknown> = {
    operation,
    ...(region ? { region } : {}),
    ...(meta.requestId ? { request_id: meta.requestId } : {}),
    retries: meta.attempts ?? 0,
  };
  const fields = service === 'DynamoDB' ? DYNAMODB_FIELDS[operation] : undefined;
  if (fields) {
    for (const f of fields.request) if (input[f] !== undefined) aws[snakeCase(f)] = input[f];
    for (const f of fields.response) if (output?.[f] !== undefined) aws[snakeCase(f)] = output[f];
    if (fields.tableNames && input.RequestItems && typeof input.RequestItems === 'object')
      aws.table_names = Object.keys(input.RequestItems);
  }
  return aws;
}

interface SdkError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number; requestId?: string; attempts?: number };
  $retryable?: { throttling?: boolean };
}

const THROTTLING_CODES = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'Throttling',
  'ThrottledException',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'BandwidthLimitExceeded',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'TransactionInProgressException',
  'EC2ThrottledException',
]);

function flag(segment: Subsegment, status: number | undefined, err?: SdkError): void {
  if ((err && (err.$retryable?.throttling || THROTTLING_CODES.has(err.name ?? ''))) || status === 429) segment.throttle = true;
  if (status !== undefined && status >= 500) segment.fault = true;
  else if (status !== undefined && status >= 400) segment.error = true;
}

/** The slice of an AWS SDK v3 client the instrumentation needs. */
interface SdkClient {
  config: { serviceId?: string; region?: string | (() => Promise<string>) };
  middlewareStack: {
    remove(name: string): boolean;
    add(
      // biome-ignore lint/suspicious/noExplicitAny: the SDK's middleware stack is typed per client; this hook fits any
      middleware: (next: (args: any) => Promise<any>, context: any) => (args: any) => Promise<any>,
      options: { step: 'build'; name: string },
    ): void;
  };
}

const SDK_MIDDLEWARE = 'XRaySDKInstrumentation';

export const tracer = {
  isTracingEnabled: () => tracingEnabled(),

  /** Records every call of the client as an `aws` subsegment of the current handler subsegment (no-op outside Lambda). */
  captureAWSv3Client<C extends SdkClient>(client: C): C {
    if (!tracingEnabled()) return client;
    client.middlewareStack.remove(SDK_MIDDLEWARE);
    client.middlewareStack.add(
      (next, context: { clientName?: string; commandName?: string }) =>
        async (args: { input?: Record<string, unknown>; request?: { headers?: Record<string, string> } }) => {
          // Inside a handler subsegment: under it; otherwise (workers, which have none) under the function's own
          // segment, as the X-Ray SDK's automatic mode does.
          if (!tracingEnabled()) return next(args);
          const active = contextValue('trace');
          const trace = active?.trace ?? invocationTrace();
          if (!trace?.sampled) return next(args);
          const service = client.config.serviceId ?? (context.clientName ?? 'AWSClient').replace(/Client$/, '');
          const operation = (context.commandName ?? '').replace(/Command$/, '');
          const segment = open(service, trace, active?.segment.id ?? trace.parent);
          segment.namespace = 'aws';
          if (args.request?.headers)
            args.request.headers['X-Amzn-Trace-Id'] = [`Root=${trace.root}`, `Parent=${segment.id}`, 'Sampled=1', ...trace.extra].join(';');
          const region =
            typeof client.config.region === 'function' ? await client.config.region().catch(() => undefined) : client.config.region;
          try {
            const res = await next(args);
            const meta = res.output?.$metadata ?? {};
            segment.aws = awsAttributes(service, operation, region, args.input ?? {}, res.output, meta);
            const length = res.response?.headers?.['content-length'];
            segment.http = {
              response: { status: meta.httpStatusCode, ...(length !== undefined ? { content_length: Number(length) } : {}) },
            };
            flag(segment, meta.httpStatusCode);
            close(segment);
            return res;
          } catch (err) {
            const sdkErr = err as SdkError;
            if (sdkErr.$metadata) {
              segment.aws = awsAttributes(service, operation, region, args.input ?? {}, undefined, sdkErr.$metadata);
              segment.http = { response: { status: sdkErr.$metadata.httpStatusCode } };
              flag(segment, sdkErr.$metadata.httpStatusCode, sdkErr);
            }
            addError(segment, err, true); // flags a fault too, as the X-Ray SDK does for any failed call
            close(segment);
            throw err;
          }
        },
      { step: 'build', name: SDK_MIDDLEWARE },
    );
    return client;
  },
};

export type Tracer = typeof tracer;

/**
 * The middy middleware of the Powertools tracer (`captureLambdaHandler`): the invocation runs inside a
 * `## <_HANDLER>` subsegment annotated ColdStart and Service; a failure is recorded on it as the error.
 * Responses are never recorded (the Powertools option `captureResponse: false`, which we always passed).
 */
export function captureLambdaHandler(_tracer: Tracer = tracer, _options?: { captureResponse?: false }): MiddlewareObj {
  const segments = new WeakMap<object, Subsegment>();
  const finish = (request: { event: unknown }, err?: unknown) => {
    const segment = segments.get(request.event as object);
    if (!segment) return;
    segments.delete(request.event as object);
    enterContextValue('trace', undefined); // later calls go under the function's segment again, as Powertools restores it
    if (err !== undefined) addError(segment, err, false);
    close(segment);
  };
  return {
    before: (request) => {
      const wasCold = coldStart;
      coldStart = false;
      // nothing of an earlier invocation's trace may leak into this one (only a traced invocation sets one)
      if (contextValue('trace')) enterContextValue('trace', undefined);
      if (!tracingEnabled()) return;
      const trace = invocationTrace();
      if (!trace?.sampled) return;
      const segment = open(`## ${process.env._HANDLER ?? 'index.handler'}`, trace, trace.parent);
      segment.annotations = { ColdStart: wasCold, Service: serviceName };
      segments.set(request.event as object, segment);
      // The rest of the invocation (later middlewares, the handler, SDK calls) sees this subsegment as parent.
      enterContextValue('trace', { trace, segment });
    },
    after: (request) => finish(request),
    onError: (request) => finish(request, request.error),
  };
}
