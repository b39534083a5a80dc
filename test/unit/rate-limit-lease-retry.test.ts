import { describe, expect, it } from 'vitest';
import type { Db } from '#shared/db/client.ts';
import { leaseTokens } from '#shared/db/rate-limit-store.ts';

type Input = { Key: { PK: string }; ConditionExpression: string; ExpressionAttributeValues: Record<string, number | string> };

/**
 * One shard item in memory, its two conditional writes evaluated as DynamoDB would (the lease id condition
 * included), and every write sent twice when `resend`: applied, then sent again as the SDK sends a write AWS
 * answered with a 500 after it applied. Counts the writes that applied.
 */
function shardDb(opts: { resend: boolean }) {
  const item: { tat?: number; lid?: string } = {};
  let applied = 0;
  const refuse = () =>
    Object.assign(new Error('The conditional request failed'), {
      name: 'ConditionalCheckFailedException',
      Item: item.tat === undefined ? undefined : { tat: { N: String(item.tat) }, ...(item.lid ? { lid: { S: item.lid } } : {}) },
    });
  const once = (input: Input) => {
    const v = input.ExpressionAttributeValues;
    if (input.ConditionExpression.startsWith('attribute_not_exists')) {
      if (item.tat !== undefined && item.tat >= (v[':now'] as number)) throw refuse();
      Object.assign(item, { tat: v[':tat'] as number, lid: v[':lid'] as string });
      applied++;
      return {};
    }
    const ownLease = input.ConditionExpression.includes('lid <> :lid') && item.lid === v[':lid'];
    if (item.tat === undefined || item.tat < (v[':now'] as number) || item.tat > (v[':max'] as number) || ownLease) throw refuse();
    Object.assign(item, { tat: item.tat + (v[':step'] as number), lid: v[':lid'] as string });
    applied++;
    return { Attributes: { tat: item.tat } };
  };
  const db = {
    send: async (cmd: { input: Input }) => {
      const first = once(cmd.input);
      return opts.resend ? once(cmd.input) : first;
    },
  } as unknown as Db;
  return { db, item, applied: () => applied };
}

const cell = { intervalMs: 100, capacityMs: 1000 }; // 10 tokens a second, a burst of 10
const key = { PK: 'T#t#rl#tenant#0', SK: 'rl' };

describe('a lease that applied and is sent again (an InternalServerError after the write: contract 14, the faithful mode)', () => {
  it('is granted once and charged once, on a full shard and on one in use', async () => {
    const now = 1_000_000;
    const s = shardDb({ resend: true });
    expect(await leaseTokens(s.db, 't', key, cell, 3, now)).toEqual({ granted: 3, tat: now + 300, full: true });
    expect(s.applied()).toBe(1);
    expect(await leaseTokens(s.db, 't', key, cell, 2, now)).toEqual({ granted: 2, tat: now + 500, full: false });
    expect([s.applied(), s.item.tat]).toEqual([2, now + 500]); // 5 tokens' time taken, not 10
  });

  it('charges each lease of its own once when nothing is sent again', async () => {
    const now = 1_000_000;
    const s = shardDb({ resend: false });
    await leaseTokens(s.db, 't', key, cell, 3, now);
    await leaseTokens(s.db, 't', key, cell, 2, now);
    expect([s.applied(), s.item.tat]).toEqual([2, now + 500]);
  });
});
