import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Db } from '#shared/db/client.ts';
import { tableName } from '#shared/db/reads.ts';

/**
 * One page of a GSI1 partition whose sort keys are at most `upTo` (the data-source schedule's due index,
 * shared/domain/integrations/sync-due.ts): the sort keys only, oldest first.
 */
export async function queryUpTo(
  db: Db,
  partition: string,
  upTo: string,
  startKey?: Record<string, unknown>,
): Promise<{ sortKeys: string[]; lastKey?: Record<string, unknown> }> {
  const out = await db.send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk AND GSI1SK <= :upTo',
      ExpressionAttributeValues: { ':pk': partition, ':upTo': upTo },
      ExclusiveStartKey: startKey,
    }),
  );
  return { sortKeys: (out.Items ?? []).map((i) => String(i.GSI1SK)), lastKey: out.LastEvaluatedKey };
}
