import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** What one attempt of a call gets: InternalServerError before the write (`internal`) or after it applied (`applied`). */
export type ScriptedFault = 'internal' | 'applied' | undefined;

/** An attempt as the fault rule sees it: the call (PutItem, UpdateItem, ...) and its low-level input. */
export interface Attempt {
  call: string;
  input: Record<string, any>;
}

/**
 * Exact DynamoDB faults for a test: `rule` names the attempts that fail, and they answer as AWS does (as the
 * AWS-faithful layer's InternalServerError, scripts/lib/aws-faithful.ts), below the SDK's retries, so the client's
 * own retry strategy meets them. `faults` counts what was injected, by call (one map for several clients when given): a test waits for it as a marker.
 */
export function scriptedFaults(
  client: DynamoDBClient,
  rule: (attempt: Attempt) => ScriptedFault,
  faults = new Map<string, number>(),
): { faults: Map<string, number> } {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const call = (context.commandName ?? '').replace(/Command$/, '');
      const fault = rule({ call, input: args.input as Record<string, any> });
      if (!fault) return next(args);
      faults.set(call, (faults.get(call) ?? 0) + 1);
      if (fault === 'applied') {
        const real = (await next(args)) as { response: { body?: { resume?: () => void } } };
        real.response.body?.resume?.(); // its answer is dropped unread
      }
      return {
        output: undefined,
        response: {
          statusCode: 500,
          reason: 'Internal Server Error',
          headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() },
          body: new TextEncoder().encode(
            JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'Internal server error' }),
          ),
        },
      } as never;
    },
    { step: 'deserialize', name: 'scriptedFaults', priority: 'low' },
  );
  return { faults };
}

/** The partition key a single-item call or a transaction's items write, low-level form. */
export function keysOf(attempt: Attempt): string[] {
  const { input } = attempt;
  const one = (input.Key ?? input.Item)?.PK?.S as string | undefined;
  if (one) return [one];
  return ((input.TransactItems ?? []) as Array<Record<string, { Key?: any; Item?: any }>>).flatMap((t) =>
    Object.values(t).map((op) => (op.Key ?? op.Item)?.PK?.S as string),
  );
}
