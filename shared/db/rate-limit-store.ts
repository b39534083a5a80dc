import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Db } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';

/**
 * Rate-limit state in the table, all under the tenant's prefix (`T#<tenant>#rl#...`, so IAM LeadingKeys keeps a
 * tenant's credentials on its own limiter):
 *  - `T#<t>#rl#config`                  operator-set limits of the tenant (`npm run admin -- set-limits`): the
 *                                       read-only tenant role may read it, never write it
 *  - `T#<t>#rl#tenant#<shard>`          one shard of the tenant's bucket
 *  - `T#<t>#rl#user#<user>#<shard>`     one shard of a user's bucket
 *  - `T#<t>#rl#fail#tenant#<shard>`     one shard of the failed-credential budget of the tenant named (contract
 *                                       section 19: anonymous doors, shared/http/credential-budget.ts)
 *  - `T#<t>#rl#fail#client#<id>#<shard>` one shard of the failed-credential budget of one client id in it
 *                                       (`sa_<account>` at the token endpoint, `ds_<source>` at the push route)
 *
 * A bucket shard is a GCRA cell (the token bucket as one number): `tat`, the theoretical arrival time in ms.
 * Taking n tokens moves `tat` forward by n emission intervals; it is allowed while `tat` stays within
 * `now + capacity`. That makes a lease one conditional UpdateItem with no read, and a hot tenant's
 * traffic is split over several shard items (each with its share of rate and burst).
 */
export const RL_KIND = 'rl';

export const LIMITER_ACTIONS = ['dynamodb:UpdateItem'] as const;

export interface Cell {
  /** Emission interval: ms per token of this shard. */
  intervalMs: number;
  /** Bucket capacity of this shard, in ms (burst × interval). */
  capacityMs: number;
}

/** `full`: the shard was full (idle or new) and its time started over at this lease. */
export type LeaseResult = { granted: number; tat: number; full: boolean } | { granted: 0; tat: number; retryAfterMs: number; full: false };

const STATE_TTL_SECONDS = 3600;

/**
 * Sort key of every limiter item: not `#`, so a stream consumer can drop the limiter's frequent writes with an
 * event filter on the sort key alone (`anything-but` `RL`), without reading the partition key.
 */
export const LIMITER_SK = 'RL';

export const limiterKeys = {
  config: (tenantId: string) => keys.misc(tenantId, RL_KIND, 'config', LIMITER_SK),
  tenantShard: (tenantId: string, shard: number | '*') => keys.misc(tenantId, RL_KIND, `tenant#${shard}`, LIMITER_SK),
  userShard: (tenantId: string, userId: string, shard: number | '*') => keys.misc(tenantId, RL_KIND, `user#${userId}#${shard}`, LIMITER_SK),
  failedTenantShard: (tenantId: string, shard: number | '*') => keys.misc(tenantId, RL_KIND, `fail#tenant#${shard}`, LIMITER_SK),
  failedClientShard: (tenantId: string, client: string, shard: number | '*') =>
    keys.misc(tenantId, RL_KIND, `fail#client#${client}#${shard}`, LIMITER_SK),
};

/**
 * The partition keys a lease writes (the bucket shards, the failed-credential budget's too; not the config item),
 * as IAM LeadingKeys patterns for `tenant`: a uuid, `?` × 36 (any tenant, for the local grant check) or the
 * tenant tag's policy variable (the read-only tenant role, which may update these: a GET leases tokens too, and
 * the token endpoint is a read row). Built from limiterKeys, so a new key layout changes the grant with it.
 */
export const limiterLeaseLeadingKeys = (tenant: string): string[] => [
  limiterKeys.tenantShard(tenant, '*').PK,
  limiterKeys.userShard(tenant, '*', '*').PK,
  limiterKeys.failedTenantShard(tenant, '*').PK,
  limiterKeys.failedClientShard(tenant, '*', '*').PK,
];

const conditionFailed = (err: unknown): err is ConditionalCheckFailedException =>
  err instanceof ConditionalCheckFailedException || (err as Error)?.name === 'ConditionalCheckFailedException';

/** `tat` of the item a failed condition returned (low-level attribute value, or plain when unmarshalled). */
/** The lease id the item holds (the last lease written), as a condition failure returns it. */
function oldLid(item: Record<string, unknown> | undefined): string | undefined {
  const v = item?.lid as { S?: string } | string | undefined;
  return typeof v === 'string' ? v : v?.S;
}

function oldTat(item: Record<string, unknown> | undefined): number | undefined {
  const v = item?.tat as { N?: string } | number | undefined;
  if (typeof v === 'number') return v;
  return v?.N !== undefined ? Number(v.N) : undefined;
}

/**
 * Takes up to `want` tokens from one shard: all of them when available, else as many as are available, else
 * none with the time until one is. A shard is either full (idle: `tat` in the past, or new), whose lease starts
 * its time over, or in use, whose lease moves `tat` on; each is its own conditional UpdateItem, and a failed one
 * returns the item, so the other follows without a read. `assumeFull` picks which to try first: the caller
 * remembers what the last lease found, so a lease costs one write while a bucket stays in one state. A few
 * attempts cover the races between containers.
 */
export async function leaseTokens(
  db: Db,
  tableName: string,
  key: Record<string, string>,
  cell: Cell,
  want: number,
  now = Date.now(),
  assumeFull = false,
): Promise<LeaseResult> {
  let n = Math.max(1, Math.floor(want));
  let full = assumeFull;
  for (let attempt = 0; attempt < 4; attempt++) {
    const expires = Math.floor(now / 1000) + STATE_TTL_SECONDS;
    // Each write names its lease: the SDK sends a write again after an InternalServerError, which AWS may answer
    // after the write applied. The step write's condition refuses a second application of the same lease, and a
    // refusal whose item holds this lease's id is this lease granted (never a second charge, nor a lease taken
    // for another container's).
    const lid = randomUUID();
    try {
      if (full) {
        // A full bucket (or a new one): its time starts now.
        await db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: key,
            UpdateExpression: 'SET tat = :tat, expires_at = :exp, lid = :lid',
            // applied once already, this fails of itself: the time it set is not in the past
            ConditionExpression: 'attribute_not_exists(tat) OR tat < :now',
            ExpressionAttributeValues: { ':tat': now + n * cell.intervalMs, ':now': now, ':exp': expires, ':lid': lid },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { granted: n, tat: now + n * cell.intervalMs, full: true };
      }
      // In use (tat in the future) with room for n more.
      const out = await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: key,
          UpdateExpression: 'SET tat = tat + :step, expires_at = :exp, lid = :lid',
          ConditionExpression: 'tat >= :now AND tat <= :max AND (attribute_not_exists(lid) OR lid <> :lid)',
          ExpressionAttributeValues: {
            ':step': n * cell.intervalMs,
            ':now': now,
            ':max': now + cell.capacityMs - n * cell.intervalMs,
            ':exp': expires,
            ':lid': lid,
          },
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { granted: n, tat: Number(out.Attributes?.tat), full: false };
    } catch (err) {
      if (!conditionFailed(err)) throw err;
      const item = (err as ConditionalCheckFailedException).Item;
      const tat = oldTat(item);
      if (tat !== undefined && oldLid(item) === lid) return { granted: n, tat, full }; // this lease applied before its retry
      // full after all (or another container's lease raced this one's): start its time
      full = tat === undefined || tat < now;
      if (tat === undefined || full) continue;
      const available = Math.floor((now + cell.capacityMs - tat) / cell.intervalMs);
      if (available < 1) return { granted: 0, tat, retryAfterMs: Math.max(1, tat + cell.intervalMs - cell.capacityMs - now), full: false };
      n = Math.min(n, available);
    }
  }
  return { granted: 0, tat: now + cell.capacityMs, retryAfterMs: cell.intervalMs, full: false }; // contention: refuse briefly rather than loop
}

/** Limits an operator set for a tenant; absent fields take the service defaults. `rps: 0` means unlimited. */
export interface TenantLimits {
  rps?: number;
  burst?: number;
  user_rps?: number;
  user_burst?: number;
}

export async function readTenantLimits(db: Db, tableName: string, tenantId: string): Promise<TenantLimits | undefined> {
  const out = await db.send(new GetCommand({ TableName: tableName, Key: limiterKeys.config(tenantId) }));
  if (!out.Item) return undefined;
  const pick = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
  return { rps: pick(out.Item.rps), burst: pick(out.Item.burst), user_rps: pick(out.Item.user_rps), user_burst: pick(out.Item.user_burst) };
}

export async function writeTenantLimits(db: Db, tableName: string, tenantId: string, limits: TenantLimits): Promise<void> {
  await db.send(
    new PutCommand({ TableName: tableName, Item: { ...limiterKeys.config(tenantId), ...limits, updated_at: new Date().toISOString() } }),
  );
}

export async function deleteTenantLimits(db: Db, tableName: string, tenantId: string): Promise<void> {
  await db.send(new DeleteCommand({ TableName: tableName, Key: limiterKeys.config(tenantId) }));
}
