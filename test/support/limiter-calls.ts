import type { Db } from '#shared/db/client.ts';
import { RateLimiter } from '#shared/http/rate-limit.ts';

/** A command a DynamoDB client received: its IAM action and the partition key it names. */
export interface DbCall {
  action: string;
  pk: string;
}

/**
 * A client that records what it is sent. A lease's first UpdateItem of a shard (a fresh container tries the
 * full bucket's reset first) fails its condition as on a bucket in use, so both of leaseTokens' writes (the
 * reset and the common one) are recorded; GetItem of the config returns limits high enough for many shards per
 * bucket.
 */
export function recordingDb(calls: DbCall[]): Db {
  const seen = new Set<string>();
  return {
    send: async (cmd: {
      constructor: { name: string };
      input: {
        Key?: { PK: string };
        Item?: { PK: string };
        ConditionExpression?: string;
        ExpressionAttributeValues?: Record<string, number>;
      };
    }) => {
      const action = `dynamodb:${cmd.constructor.name.replace(/Command$/, '')}Item`;
      const pk = (cmd.input.Key ?? cmd.input.Item)!.PK;
      calls.push({ action, pk });
      if (action === 'dynamodb:GetItem') return { Item: { rps: 3200, burst: 6400, user_rps: 1600, user_burst: 3200 } };
      if (action === 'dynamodb:UpdateItem' && cmd.input.ConditionExpression?.startsWith('attribute_not_exists') && !seen.has(pk)) {
        seen.add(pk);
        throw Object.assign(new Error('The conditional request failed'), {
          name: 'ConditionalCheckFailedException',
          Item: { tat: { N: String(cmd.input.ExpressionAttributeValues![':now']! + 1) } },
        });
      }
      return { Attributes: { tat: 0 } };
    },
  } as unknown as Db;
}

/**
 * What the real limiter (shared/http/rate-limit.ts) sends for `tenant`: four requests per user, each past the
 * previous lease so each writes again, on the shards `randoms` pick.
 */
export async function limiterCalls(tenant: string, users: string[], randoms: number[]): Promise<DbCall[]> {
  const calls: DbCall[] = [];
  const db = recordingDb(calls);
  let t = 1_000_000;
  let r = 0;
  const limiter = new RateLimiter({
    db: async () => db,
    tableName: () => 't',
    defaults: () => ({ rps: 50, burst: 200 }),
    now: () => t,
    random: () => randoms[r++ % randoms.length]!,
  });
  for (const user of users) {
    for (let i = 0; i < 4; i++) {
      await limiter.take(tenant, user);
      t += 2_000;
    }
  }
  return calls;
}
