import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { instrument, type Db } from '#shared/db/client.ts';

/**
 * The store's document client (shared/db/client.ts) converts values around a low-level client itself, for the
 * CPU DynamoDBDocumentClient spends per call. It must send and answer exactly what DynamoDBDocumentClient (with the
 * options the store used) does: each command below goes through both, the low-level input each sends is
 * captured before serialization, and each is answered the same low-level output.
 */
const OPTIONS = { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } };
const T = 'table';
const rich = {
  s: 'x',
  empty: '',
  n: 12.5,
  big: 2 ** 40,
  yes: true,
  nil: null,
  gone: undefined,
  list: [1, 'a', { m: [null, false] }],
  map: { deep: { deeper: ['z'] } },
  set: new Set(['a', 'b']),
  nums: new Set([1, 2]),
};
const item = { PK: 'T#t#goal#1', SK: '#', ...rich };
const M = (v: Record<string, unknown>) => marshall(v, { removeUndefinedValues: true });

/**
 * A low-level client whose HTTP handler answers `output` (as DynamoDB's JSON protocol) to anything, recording the
 * low-level input each call was sent (once built: every conversion done). The SDK runs whole otherwise.
 */
function fakeClient(output: Record<string, unknown>) {
  const requestHandler = {
    handle: async () => ({
      response: {
        statusCode: 200,
        headers: { 'content-type': 'application/x-amz-json-1.0' },
        body: Readable.from([Buffer.from(JSON.stringify(output))]),
      },
    }),
  };
  const client = new DynamoDBClient({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:1',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    maxAttempts: 1,
    requestHandler,
  });
  const sent: unknown[] = [];
  client.middlewareStack.add(
    (next) => async (args) => {
      // the store's client asks every call for its consumed capacity (instrument): not the conversion's doing
      const { ReturnConsumedCapacity: _capacity, ...input } = args.input as Record<string, unknown>;
      sent.push(structuredClone(input));
      return next(args);
    },
    { step: 'build', name: 'recordLowLevelInput' },
  );
  return { client, sent };
}

const cases: Array<[string, () => object, Record<string, unknown>]> = [
  ['Get', () => new GetCommand({ TableName: T, Key: { PK: 'p', SK: '#' }, ConsistentRead: true }), { Item: M(item) }],
  ['Get, nothing found', () => new GetCommand({ TableName: T, Key: { PK: 'p', SK: '#' } }), {}],
  [
    'BatchGet',
    () =>
      new BatchGetCommand({
        RequestItems: {
          [T]: {
            Keys: [
              { PK: 'a', SK: '#' },
              { PK: 'b', SK: '#' },
            ],
            ConsistentRead: true,
          },
        },
      }),
    { Responses: { [T]: [M(item), M({ PK: 'b', SK: '#' })] }, UnprocessedKeys: { [T]: { Keys: [M({ PK: 'c', SK: '#' })] } } },
  ],
  [
    'Query',
    () =>
      new QueryCommand({
        TableName: T,
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :p AND GSI1SK >= :s',
        ExpressionAttributeValues: { ':p': 'x', ':s': '2026', ':set': new Set(['q']) },
        ExclusiveStartKey: { PK: 'a', SK: '#', GSI1PK: 'x', GSI1SK: '1' },
        Limit: 5,
        ScanIndexForward: false,
      }),
    { Items: [M(item), M({ PK: 'z', SK: 'IX#a', n: 1 })], Count: 2, ScannedCount: 2, LastEvaluatedKey: M({ PK: 'z', SK: 'IX#a' }) },
  ],
  [
    'Put',
    () =>
      new PutCommand({
        TableName: T,
        Item: item,
        ConditionExpression: 'attribute_not_exists(PK) OR v = :v',
        ExpressionAttributeValues: { ':v': 3 },
      }),
    {},
  ],
  [
    'Update',
    () =>
      new UpdateCommand({
        TableName: T,
        Key: { PK: 'p', SK: 'RL' },
        UpdateExpression: 'SET #a = :a ADD n :one',
        ExpressionAttributeNames: { '#a': 'a' },
        ExpressionAttributeValues: { ':a': rich.list, ':one': 1 },
        ReturnValues: 'ALL_NEW',
      }),
    { Attributes: M(item) },
  ],
  [
    'Delete',
    () =>
      new DeleteCommand({
        TableName: T,
        Key: { PK: 'p', SK: '#' },
        ConditionExpression: 'v = :v',
        ExpressionAttributeValues: { ':v': 1 },
        ReturnValues: 'ALL_OLD',
      }),
    { Attributes: M(item) },
  ],
  [
    'TransactWrite',
    () =>
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: T, Item: item, ConditionExpression: 'attribute_not_exists(PK)' } },
          { Update: { TableName: T, Key: { PK: 'c', SK: '#' }, UpdateExpression: 'ADD n :n', ExpressionAttributeValues: { ':n': -1 } } },
          { Delete: { TableName: T, Key: { PK: 'd', SK: 'IX#x' } } },
          {
            ConditionCheck: {
              TableName: T,
              Key: { PK: 'e', SK: '#' },
              ConditionExpression: 'v = :v',
              ExpressionAttributeValues: { ':v': 7 },
            },
          },
        ],
        ReturnConsumedCapacity: 'TOTAL',
      }),
    { ConsumedCapacity: [{ TableName: T, CapacityUnits: 8 }] },
  ],
  [
    'BatchWrite',
    () =>
      new BatchWriteCommand({ RequestItems: { [T]: [{ PutRequest: { Item: item } }, { DeleteRequest: { Key: { PK: 'd', SK: '#' } } }] } }),
    { UnprocessedItems: { [T]: [{ PutRequest: { Item: M({ PK: 'u', SK: '#', set: new Set(['a']) }) } }] } },
  ],
];

describe('the store document client', () => {
  it.each(cases)('%s: the same low-level request, and the same answer, as DynamoDBDocumentClient', async (_name, command, output) => {
    const theirs = fakeClient(output);
    const ours = fakeClient(output);
    const expected = await DynamoDBDocumentClient.from(theirs.client, OPTIONS).send(command() as never);
    const actual = await (instrument(ours.client) as Db).send(command() as never);
    expect(theirs.sent).toHaveLength(1);
    expect(ours.sent).toEqual(theirs.sent);
    const { $metadata: _a, ...answer } = actual as Record<string, unknown>;
    const { $metadata: _b, ...wanted } = expected as Record<string, unknown>;
    expect(answer).toEqual(wanted);
  });
});
