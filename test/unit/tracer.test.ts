import { createSocket, type Socket } from 'node:dgram';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import middy from '@middy/core';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { HttpResponse } from '@smithy/core/transport';
import { captureLambdaHandler, parseTraceHeader, tracer } from '#shared/tracer.ts';

/**
 * shared/tracer.ts against the X-Ray daemon protocol: a UDP listener on 127.0.0.1 stands in for the daemon
 * the Lambda runtime runs (no local engine exists for X-Ray). DynamoDB answers come from a canned HTTP
 * handler so the SDK's own middleware stack (retries, deserialisation, errors) runs for real.
 */
interface Doc {
  id: string;
  name: string;
  trace_id: string;
  parent_id: string;
  type: string;
  start_time: number;
  end_time: number;
  namespace?: string;
  annotations?: Record<string, unknown>;
  aws?: Record<string, unknown>;
  http?: { response?: { status?: number } };
  fault?: boolean;
  error?: boolean;
  throttle?: boolean;
  cause?: { exceptions: Array<{ message: string; type: string; remote: boolean }> };
}

const ROOT = '1-67891233-abcdef012345678912345678';
const FACADE = '53995c3f42cd8ad8';
let daemon: Socket;
let received: Doc[] = [];
const seenHeaders: string[] = [];

const cannedDynamo = (status: number, body: object) => ({
  handle: async (request: { headers: Record<string, string> }) => {
    seenHeaders.push(request.headers['X-Amzn-Trace-Id'] ?? request.headers['x-amzn-trace-id'] ?? '');
    const text = JSON.stringify(body);
    return {
      response: new HttpResponse({
        statusCode: status,
        headers: { 'x-amzn-requestid': 'REQ1', 'content-length': String(text.length), 'content-type': 'application/x-amz-json-1.0' },
        body: Readable.from([Buffer.from(text)]),
      }),
    };
  },
});

const client = (status: number, body: object) =>
  tracer.captureAWSv3Client(
    new DynamoDBClient({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      maxAttempts: 1,
      requestHandler: cannedDynamo(status, body) as never,
    }),
  );

async function settle(count: number): Promise<Doc[]> {
  for (let i = 0; i < 100 && received.length < count; i++) await new Promise((r) => setTimeout(r, 20));
  return received;
}

beforeAll(async () => {
  daemon = createSocket('udp4');
  daemon.on('message', (msg) => {
    const [header, body] = msg.toString('utf8').split('\n');
    expect(JSON.parse(header!)).toEqual({ format: 'json', version: 1 });
    received.push(JSON.parse(body!) as Doc);
  });
  await new Promise<void>((r) => daemon.bind(0, '127.0.0.1', () => r()));
  process.env.AWS_XRAY_DAEMON_ADDRESS = `127.0.0.1:${daemon.address().port}`;
  process.env.AWS_LAMBDA_FUNCTION_NAME = 'traced';
  process.env._HANDLER = 'index.handler';
});

afterAll(() => {
  daemon.close();
  for (const k of ['AWS_XRAY_DAEMON_ADDRESS', 'AWS_LAMBDA_FUNCTION_NAME', '_HANDLER', '_X_AMZN_TRACE_ID']) delete process.env[k];
});

beforeEach(() => {
  received = [];
  seenHeaders.length = 0;
  process.env._X_AMZN_TRACE_ID = `Root=${ROOT};Parent=${FACADE};Sampled=1;Lineage=a87bd80c:0`;
});

describe('shared/tracer.ts', () => {
  it('parses the trace header the runtime sets', () => {
    expect(parseTraceHeader(`Root=${ROOT};Parent=${FACADE};Sampled=0`)).toEqual({ root: ROOT, parent: FACADE, sampled: false, extra: [] });
    expect(parseTraceHeader('Root=1-2-3')).toBeUndefined();
    expect(parseTraceHeader(undefined)).toBeUndefined();
  });

  it('a call outside any handler subsegment (a worker) goes under the function segment', async () => {
    const db = client(200, {});
    // first in this file: no handler has run in this async context yet, as in a worker invocation
    await (async () => {
      await db.send(new GetItemCommand({ TableName: 'goals', Key: { pk: { S: 'x' } } }));
    })();
    const [call] = await settle(1);
    expect(call).toMatchObject({ name: 'DynamoDB', parent_id: FACADE, trace_id: ROOT, aws: { operation: 'GetItem' } });
  });

  it('a handler subsegment under the function segment, annotated, with each DynamoDB call nested in it', async () => {
    const db = client(200, { Item: { pk: { S: 'x' } }, ConsumedCapacity: { TableName: 't', CapacityUnits: 0.5 } });
    const handler = middy(async () => {
      await db.send(new GetItemCommand({ TableName: 'goals', Key: { pk: { S: 'x' } }, ConsistentRead: true }));
      return { statusCode: 200 };
    }).use(captureLambdaHandler(tracer, { captureResponse: false }));
    await handler({}, {} as never);
    await handler({}, {} as never);
    const docs = await settle(4);
    const handlers = docs.filter((d) => d.name === '## index.handler');
    const calls = docs.filter((d) => d.name === 'DynamoDB');
    expect(handlers).toHaveLength(2);
    expect(calls).toHaveLength(2);
    expect(handlers.map((h) => h.annotations)).toEqual([
      { ColdStart: true, Service: 'goal-tracking' },
      { ColdStart: false, Service: 'goal-tracking' },
    ]);
    for (const h of handlers) expect(h).toMatchObject({ type: 'subsegment', trace_id: ROOT, parent_id: FACADE });
    for (const h of handlers) expect(h.end_time).toBeGreaterThanOrEqual(h.start_time);
    for (const [i, call] of calls.entries()) {
      expect(handlers.map((h) => h.id)).toContain(call.parent_id);
      expect(call).toMatchObject({
        namespace: 'aws',
        trace_id: ROOT,
        aws: { operation: 'GetItem', region: 'eu-west-1', request_id: 'REQ1', retries: 1, table_name: 'goals', consistent_read: true },
        http: { response: { status: 200 } },
      });
      expect(call.fault ?? false).toBe(false);
      // the trace header passed on to DynamoDB names the call's subsegment as parent
      expect(seenHeaders[i]).toBe(`Root=${ROOT};Parent=${call.id};Sampled=1;Lineage=a87bd80c:0`);
    }
  });

  it('a failed call is flagged error (4xx) and fault with its cause, as the X-Ray SDK flags it; so is a failed handler', async () => {
    const db = client(400, {
      __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
      message: 'The conditional request failed',
    });
    const handler = middy(async () => {
      await db.send(new PutItemCommand({ TableName: 'goals', Item: { pk: { S: 'x' } } }));
      return { statusCode: 200 };
    }).use(captureLambdaHandler(tracer, { captureResponse: false }));
    await expect(handler({}, {} as never)).rejects.toThrow(/conditional request failed/);
    const docs = await settle(2);
    const call = docs.find((d) => d.name === 'DynamoDB')!;
    const outer = docs.find((d) => d.name === '## index.handler')!;
    expect(call).toMatchObject({
      error: true,
      fault: true,
      http: { response: { status: 400 } },
      aws: { operation: 'PutItem', table_name: 'goals' },
    });
    expect(call.throttle).toBeUndefined();
    expect(call.cause!.exceptions[0]).toMatchObject({ type: 'ConditionalCheckFailedException', remote: true });
    expect(outer).toMatchObject({ fault: true });
    expect(outer.cause!.exceptions[0]).toMatchObject({
      type: 'ConditionalCheckFailedException',
      message: 'The conditional request failed',
      remote: false,
    });
  });

  it('sends nothing for an unsampled request, or outside Lambda', async () => {
    const db = client(200, {});
    const handler = middy(async () => {
      await db.send(new GetItemCommand({ TableName: 'goals', Key: { pk: { S: 'x' } } }));
      return { statusCode: 200 };
    }).use(captureLambdaHandler(tracer, { captureResponse: false }));
    process.env._X_AMZN_TRACE_ID = `Root=${ROOT};Parent=${FACADE};Sampled=0`;
    await handler({}, {} as never);
    delete process.env.AWS_LAMBDA_FUNCTION_NAME;
    process.env._X_AMZN_TRACE_ID = `Root=${ROOT};Parent=${FACADE};Sampled=1`;
    await handler({}, {} as never);
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'traced';
    // the marker: a sampled invocation after them sends its two documents over the same socket; once they are
    // in, anything the two above had sent would be too
    const MARKER = '1-67891233-000000000000000000000001';
    process.env._X_AMZN_TRACE_ID = `Root=${MARKER};Parent=${FACADE};Sampled=1`;
    await handler({}, {} as never);
    expect((await settle(2)).map((d) => [d.trace_id, d.name]).sort()).toEqual([
      [MARKER, '## index.handler'],
      [MARKER, 'DynamoDB'],
    ]);
    // the SDK's own recursion-detection header (the invocation's, in Lambda) at most; no subsegment named as parent
    expect(seenHeaders.slice(0, 2)).toEqual([`Root=${ROOT};Parent=${FACADE};Sampled=0`, '']);
  });
});
