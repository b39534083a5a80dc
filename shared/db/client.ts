import { isDeepStrictEqual } from 'node:util';
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  type ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  type PutItemCommandInput,
  QueryCommand as QueryItemsCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { AwsCredentialIdentity, FinalizeRequestMiddleware, InitializeMiddleware } from '@aws-sdk/types';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type BatchGetCommandOutput,
  type BatchWriteCommandOutput,
  type DeleteCommandOutput,
  type GetCommandOutput,
  type PutCommandOutput,
  type QueryCommandOutput,
  type TransactWriteCommandOutput,
  type UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall, type marshallOptions } from '@aws-sdk/util-dynamodb';
import { config } from '#shared/config.ts';
import { startDbCall } from '#shared/db/metrics.ts';
import { requireTableAccess } from '#shared/grants.ts';
import { tracer } from '#shared/tracer.ts';

/**
 * The table as the store uses it: the document commands of @aws-sdk/lib-dynamodb (plain values, not
 * attribute-value maps), answered as DynamoDBDocumentClient answers them.
 */
export interface Db {
  send(command: GetCommand): Promise<GetCommandOutput>;
  send(command: BatchGetCommand): Promise<BatchGetCommandOutput>;
  send(command: QueryCommand): Promise<QueryCommandOutput>;
  send(command: PutCommand): Promise<PutCommandOutput>;
  send(command: UpdateCommand): Promise<UpdateCommandOutput>;
  send(command: DeleteCommand): Promise<DeleteCommandOutput>;
  send(command: TransactWriteCommand): Promise<TransactWriteCommandOutput>;
  send(command: BatchWriteCommand): Promise<BatchWriteCommandOutput>;
}

/**
 * Where a command's input or output holds attribute values, as lib-dynamodb declares it per command: a key
 * names a member, `*` every member of a map or array; VALUES: every member is one value; VALUE: this is one.
 */
type ValuePaths = typeof VALUE | typeof VALUES | { [member: string]: ValuePaths };
const VALUE = 'value';
const VALUES = 'values';

const EXPECTED = { '*': { Value: VALUE, AttributeValueList: VALUES } } as const;
const WRITE_OUTPUT = { Attributes: VALUES, ItemCollectionMetrics: { ItemCollectionKey: VALUES } } as const;
const WRITE_REQUESTS = { '*': { '*': { PutRequest: { Item: VALUES }, DeleteRequest: { Key: VALUES } } } } as const;

/** Each document command: the low-level command it becomes, and where its input and output hold values (lib-dynamodb's key nodes). */
// biome-ignore lint/complexity/noBannedTypes: keyed by the SDK's command classes, whose constructor types differ per command
const DOCUMENT_COMMANDS = new Map<Function, { lowLevel: new (input: never) => object; input: ValuePaths; output: ValuePaths }>([
  [GetCommand, { lowLevel: GetItemCommand, input: { Key: VALUES }, output: { Item: VALUES } }],
  [
    BatchGetCommand,
    {
      lowLevel: BatchGetItemCommand,
      input: { RequestItems: { '*': { Keys: { '*': VALUES } } } },
      output: { Responses: { '*': { '*': VALUES } }, UnprocessedKeys: { '*': { Keys: { '*': VALUES } } } },
    },
  ],
  [
    QueryCommand,
    {
      lowLevel: QueryItemsCommand,
      input: {
        KeyConditions: { '*': { AttributeValueList: VALUES } },
        QueryFilter: { '*': { AttributeValueList: VALUES } },
        ExclusiveStartKey: VALUES,
        ExpressionAttributeValues: VALUES,
      },
      output: { Items: { '*': VALUES }, LastEvaluatedKey: VALUES },
    },
  ],
  [
    PutCommand,
    { lowLevel: PutItemCommand, input: { Item: VALUES, Expected: EXPECTED, ExpressionAttributeValues: VALUES }, output: WRITE_OUTPUT },
  ],
  [
    UpdateCommand,
    {
      lowLevel: UpdateItemCommand,
      input: { Key: VALUES, AttributeUpdates: { '*': { Value: VALUE } }, Expected: EXPECTED, ExpressionAttributeValues: VALUES },
      output: WRITE_OUTPUT,
    },
  ],
  [
    DeleteCommand,
    { lowLevel: DeleteItemCommand, input: { Key: VALUES, Expected: EXPECTED, ExpressionAttributeValues: VALUES }, output: WRITE_OUTPUT },
  ],
  [
    TransactWriteCommand,
    {
      lowLevel: TransactWriteItemsCommand,
      input: {
        TransactItems: {
          '*': {
            ConditionCheck: { Key: VALUES, ExpressionAttributeValues: VALUES },
            Put: { Item: VALUES, ExpressionAttributeValues: VALUES },
            Delete: { Key: VALUES, ExpressionAttributeValues: VALUES },
            Update: { Key: VALUES, ExpressionAttributeValues: VALUES },
          },
        },
      },
      output: { ItemCollectionMetrics: { '*': { '*': { ItemCollectionKey: VALUES } } } },
    },
  ],
  [
    BatchWriteCommand,
    {
      lowLevel: BatchWriteItemCommand,
      input: { RequestItems: WRITE_REQUESTS },
      output: { UnprocessedItems: WRITE_REQUESTS, ItemCollectionMetrics: { '*': { '*': { ItemCollectionKey: VALUES } } } },
    },
  ],
]);

/** `out[k] = v` as an own property, whatever `k` is (`__proto__` too), as Object.fromEntries sets it. */
const setOwn = (out: Record<string, unknown>, k: string, v: unknown) => {
  if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  else out[k] = v;
};

/**
 * A copy of `node` with the values at `paths` converted by `convert` (lib-dynamodb's processObj). Plain loops,
 * not Object.entries/fromEntries: it runs twice on every call of every request.
 */
function convertAt(node: unknown, paths: ValuePaths, convert: (value: unknown) => unknown): unknown {
  if (node === undefined || node === null || typeof node !== 'object') return paths === VALUE && node !== undefined ? convert(node) : node;
  if (paths === VALUE) return convert(node);
  if (paths === VALUES) {
    if (Array.isArray(node)) return node.map(convert);
    const out: Record<string, unknown> = {};
    for (const k in node) {
      const v = (node as Record<string, unknown>)[k];
      if (Object.hasOwn(node, k) && v !== undefined) setOwn(out, k, convert(v));
    }
    return out;
  }
  const every = paths['*'];
  if (every !== undefined) {
    if (Array.isArray(node)) return node.map((v) => convertAt(v, every, convert));
    const out: Record<string, unknown> = {};
    for (const k in node) if (Object.hasOwn(node, k)) setOwn(out, k, convertAt((node as Record<string, unknown>)[k], every, convert));
    return out;
  }
  const copy: Record<string, unknown> = { ...(node as Record<string, unknown>) };
  for (const member in paths) {
    const value = copy[member];
    if (value !== undefined) copy[member] = convertAt(value, (paths as Record<string, ValuePaths>)[member]!, convert);
  }
  return copy;
}

const MARSHALL: marshallOptions = { removeUndefinedValues: true, convertClassInstanceToMap: false, convertTopLevelContainer: true };
const toAttributeValue = (value: unknown) => marshall(value, MARSHALL);
const fromAttributeValue = (value: unknown) => unmarshall(value as never, { convertWithoutMapWrapper: true });

/**
 * A document client over `client` without DynamoDBDocumentClient's cost per call: that one builds and sorts
 * the whole middleware chain again for every call (its commands add their marshalling middleware to it), which
 * the SDK's `cacheMiddleware` avoids but DynamoDBDocumentClient refuses. Here the low-level client keeps one
 * resolved chain per command (cacheMiddleware) and the values are converted around it, where lib-dynamodb
 * converts them and with the same options. Like DynamoDBDocumentClient it shares the low-level client's config
 * and middleware stack and sends a low-level command as is (Powertools' idempotency store sends those).
 */
function documentClient(client: DynamoDBClient): Db {
  const send = async (command: { input: unknown }) => {
    const translation = DOCUMENT_COMMANDS.get(command.constructor);
    if (!translation) return client.send(command as GetItemCommand);
    const input = convertAt(command.input, translation.input, toAttributeValue);
    const output = await client.send(new translation.lowLevel(input as never) as GetItemCommand);
    return convertAt(output, translation.output, fromAttributeValue);
  };
  return { send, config: client.config, middlewareStack: client.middlewareStack } as Db;
}

/** Wraps a low-level client so every call asks for consumed capacity and is counted per request. */
export function instrument(client: DynamoDBClient): Db {
  // The SDK's logger middleware logs each call to the client's `logger`, which we never set (a no-op), yet it
  // still runs the schema's sensitive-field filters over every input and output: ~7 % of a call's CPU.
  client.middlewareStack.remove('loggerMiddleware');
  tracer.captureAWSv3Client(client);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity ??= 'TOTAL';
      const done = startDbCall(context.commandName);
      let output: Parameters<typeof done>[0] = {}; // a refused call (a cancelled transaction) is a round trip too
      try {
        const result = await next(args);
        output = result.output as typeof output;
        return result;
      } finally {
        done(output);
      }
    },
    { step: 'initialize', name: 'dbMetrics' },
  );
  // the function's row grants what it may do (shared/grants.ts): checked here only on the local stack
  client.middlewareStack.add(
    (next, context) => async (args) => {
      requireTableAccess(context.commandName ?? '', args.input as Record<string, unknown>);
      return next(args);
    },
    { step: 'initialize', name: 'rowGrants' },
  );
  // every middleware is in place: from the first call on, the resolved chain is kept per command
  client.config.cacheMiddleware = true;
  return documentClient(client);
}

/**
 * What the local stack adds to every client built here (its AWS-faithful mode: stale reads and faults,
 * scripts/lib/aws-faithful.ts). Only the local stack sets it; in a Lambda it stays unset.
 */
let localLayer: ((client: DynamoDBClient) => void) | undefined;
export function layerClients(layer: ((client: DynamoDBClient) => void) | undefined): void {
  localLayer = layer;
}

/** Set on a call's context (shared by its attempts) once an attempt answered 5xx or not at all: a write may have applied. */
const AMBIGUOUS_ATTEMPT = Symbol('ambiguousAttempt');
type CallContext = { [AMBIGUOUS_ATTEMPT]?: boolean };

/**
 * Each attempt's outcome, below the SDK's retries: an attempt answered 5xx or not at all marks the call (its write
 * may have taken effect, and the retry then meets it); a single-item write rejected for a transaction under way
 * on its item (TransactionConflictException: nothing written) is made again as a throttled attempt is, which the
 * SDK does not do on its own.
 */
const attemptOutcomes: FinalizeRequestMiddleware<object, object> = (next, context) => async (args) => {
  try {
    return await next(args);
  } catch (err) {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number }; $retryable?: object };
    const status = e.$metadata?.httpStatusCode;
    if (status === undefined || status >= 500) (context as CallContext)[AMBIGUOUS_ATTEMPT] = true;
    if (e.name === 'TransactionConflictException') e.$retryable ??= {};
    throw err;
  }
};

/**
 * A conditional PutItem whose earlier attempt answered 5xx or nothing (it took effect, as AWS may answer a write
 * that applied) and whose retry then failed its condition: when the item stored is exactly the one it put, the
 * write was its own and it succeeded (Powertools' idempotency record: without this the request would find "its"
 * record in progress and answer 409). Any other item, or a failed condition after clear answers, is the answer.
 */
const ownPutAfterAmbiguousAttempt =
  (client: DynamoDBClient): InitializeMiddleware<object, object> =>
  (next, context) =>
  async (args) => {
    try {
      return await next(args);
    } catch (err) {
      const input = args.input as PutItemCommandInput;
      if (
        context.commandName !== 'PutItemCommand' ||
        !(context as CallContext)[AMBIGUOUS_ATTEMPT] ||
        !input.ConditionExpression ||
        (err as Error).name !== 'ConditionalCheckFailedException'
      )
        throw err;
      const key = { PK: input.Item!.PK!, SK: input.Item!.SK! };
      const stored =
        (err as ConditionalCheckFailedException).Item ??
        (await client.send(new GetItemCommand({ TableName: input.TableName, Key: key, ConsistentRead: true }))).Item;
      if (!stored || !isDeepStrictEqual(unmarshall(stored), unmarshall(input.Item!))) throw err;
      return { output: { $metadata: { ...(err as ConditionalCheckFailedException).$metadata, httpStatusCode: 200 } }, response: undefined };
    }
  };

/**
 * The same retry configuration deployed and locally: the SDK's standard strategy (its back-off, its retry quota),
 * 5 attempts; a single-item write's transaction conflict retried as well, and a conditional put that meets its own
 * applied write answered as done (attemptOutcomes, ownPutAfterAmbiguousAttempt). A TransactWriteItems needs
 * neither: the SDK sends one ClientRequestToken with all its attempts, so a retry of one that applied succeeds
 * without writing again.
 */
export function createDynamoClient(credentials?: AwsCredentialIdentity): DynamoDBClient {
  const endpoint = config.dynamoEndpoint;
  const client = new DynamoDBClient({
    region: config.region,
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    ...(credentials && !endpoint ? { credentials } : {}),
    maxAttempts: 5,
  });
  client.middlewareStack.add(ownPutAfterAmbiguousAttempt(client) as never, { step: 'initialize', name: 'ownPutAfterAmbiguousAttempt' });
  client.middlewareStack.add(attemptOutcomes as never, { step: 'finalizeRequest', priority: 'low', name: 'attemptOutcomes' });
  localLayer?.(client);
  return client;
}

let sharedClient: Db | undefined;

/** The function's own (execution-role) client. Created once per container. */
export function baseDb(): Db {
  sharedClient ??= instrument(createDynamoClient());
  return sharedClient;
}
