import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { AwsCredentialIdentity } from '@aws-sdk/types';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config.ts';
import { startDbCall } from '#shared/db/metrics.ts';
import { requireTableAccess } from '#shared/grants.ts';
import { tracer } from '#shared/tracer.ts';

export type Db = DynamoDBDocumentClient;

/** Wraps a low-level client so every call asks for consumed capacity and is counted per request. */
export function instrument(client: DynamoDBClient): DynamoDBDocumentClient {
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
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } });
}

export function createDynamoClient(credentials?: AwsCredentialIdentity): DynamoDBClient {
  const endpoint = config.dynamoEndpoint;
  return new DynamoDBClient({
    region: config.region,
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    ...(credentials && !endpoint ? { credentials } : {}),
    maxAttempts: 5,
  });
}

let sharedClient: DynamoDBDocumentClient | undefined;

/** The function's own (execution-role) client. Created once per container. */
export function baseDb(): DynamoDBDocumentClient {
  sharedClient ??= instrument(createDynamoClient());
  return sharedClient;
}
