import { limiterLeaseLeadingKeys } from '#shared/db/rate-limit-store.ts';
import type { Grant } from '#shared/function-grant.ts';
import { ITEM_WRITE_ACTIONS, OPERATOR_ONLY_LEADING_KEYS, TABLE_DATA_ACTIONS } from '#shared/db/table-access.ts';
import { contextValue, withContextValue } from '#shared/request-context.ts';

/**
 * Runs `fn` under what the running function's row grants it (shared/function-grant.ts). In AWS, IAM refuses what
 * a row does not grant and nothing here runs (no grant is set). The local stack runs every handler inside
 * `withGrant(row)`, so a handler that writes on a `read` row, or sends to a queue its row does not name, fails
 * locally too, with the error AWS would raise (a 500 for the client), instead of only after a deployment.
 */
export function withGrant<T>(grant: Grant, fn: () => T): T {
  return withContextValue('grant', grant, fn);
}

/** AWS's answer to an action the role does not allow. */
export class AccessDeniedError extends Error {
  override name = 'AccessDeniedException';
}

type Item = Record<string, unknown>;

/**
 * The IAM actions a DynamoDB command needs (a transaction: its items' actions, each with its item's partition key
 * at the same index), and the partition keys it names (a BatchWriteItem: every item's, as its LeadingKeys are).
 */
export function tableActionsOf(commandName: string, input: Item): { actions: string[]; partitionKeys: string[] } {
  const op = commandName.replace(/Command$/, '');
  const pk = (key: unknown) => {
    const v = (key as Item | undefined)?.PK;
    return typeof v === 'string' ? v : ((v as { S?: string } | undefined)?.S ?? '');
  };
  if (op === 'TransactWriteItems') {
    const items = (input.TransactItems as Item[] | undefined) ?? [];
    return {
      actions: items.map((i) => (i.ConditionCheck ? 'ConditionCheckItem' : `${Object.keys(i)[0]}Item`)).map((a) => `dynamodb:${a}`),
      partitionKeys: items.map((i) => {
        const body = Object.values(i)[0] as Item;
        return pk(body.Key ?? body.Item);
      }),
    };
  }
  if (op === 'TransactGetItems') return { actions: ['dynamodb:GetItem'], partitionKeys: [] };
  if (op === 'BatchWriteItem') {
    const requests = Object.values((input.RequestItems as Record<string, Item[]> | undefined) ?? {}).flat();
    return {
      actions: ['dynamodb:BatchWriteItem'],
      partitionKeys: requests.map((r) => pk((r.PutRequest as Item | undefined)?.Item ?? (r.DeleteRequest as Item | undefined)?.Key)),
    };
  }
  return { actions: [`dynamodb:${op}`], partitionKeys: [pk(input.Key ?? input.Item)] };
}

/**
 * IAM's StringLike (`*` any run, `?` one character), matched without a regex: the classic two-pointer wildcard
 * match, which backtracks only to the last `*`, so it is O(pattern x key) at worst and never exponential.
 */
export function stringLike(pattern: string, s: string): boolean {
  let p = 0;
  let i = 0;
  let star = -1;
  let mark = 0;
  while (i < s.length) {
    if (p < pattern.length && (pattern[p] === '?' || pattern[p] === s[i])) {
      p++;
      i++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = i;
    } else if (star >= 0) {
      p = star + 1;
      i = ++mark;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

// The bucket shards of any tenant (not the config item), as the read-only tenant role may update them.
const LIMITER_LEASE_PATTERNS = limiterLeaseLeadingKeys('?'.repeat(36));
const limiterKey = { test: (k: string) => LIMITER_LEASE_PATTERNS.some((p) => stringLike(p, k)) };
const operatorOnlyKey = (k: string) => OPERATOR_ONLY_LEADING_KEYS.some((p) => stringLike(p, k));
const itemWrite = new Set<string>(ITEM_WRITE_ACTIONS);

/**
 * The first write of the command to an operator-only item (the tenant's rate limits), as `action key`: the write
 * role's explicit Deny (infra/constructs/tenant-data.ts) refuses it whatever the row grants. A transaction's
 * items are paired with their own keys (a ConditionCheck of the item is a read); a batch's action with every key.
 */
function operatorOnlyWrite(actions: string[], partitionKeys: string[]): string | undefined {
  const paired = actions.length === partitionKeys.length;
  for (const [i, action] of actions.entries()) {
    if (!itemWrite.has(action)) continue;
    const key = (paired ? [partitionKeys[i]!] : partitionKeys).find(operatorOnlyKey);
    if (key !== undefined) return `${action} on ${key}`;
  }
  return undefined;
}

/**
 * Throws AccessDeniedError when the current grant does not allow the command. Every authenticated function
 * reads (the caller's user) and leases rate-limit tokens (UpdateItem on the limiter's bucket shards), whatever its
 * row says: infra/stack.ts grants those to every JWT route. No row may write an operator-only item (the tenant's
 * rate limits, OPERATOR_ONLY_LEADING_KEYS), a `write` row neither.
 */
export function requireTableAccess(commandName: string, input: Item): void {
  const grant = contextValue('grant');
  if (!grant) return;
  const { actions, partitionKeys } = tableActionsOf(commandName, input);
  const allowed = new Set<string>(grant.table === 'none' ? [] : TABLE_DATA_ACTIONS[grant.table]);
  const limiterLease =
    grant.table !== 'none' && actions.every((a) => a === 'dynamodb:UpdateItem') && partitionKeys.every((k) => limiterKey.test(k));
  const denied = actions.find((a) => !allowed.has(a));
  if (denied && !limiterLease)
    throw new AccessDeniedError(`${grant.name} is not authorized to perform ${denied}: its row grants table access '${grant.table}'`);
  const operatorItem = operatorOnlyWrite(actions, partitionKeys);
  if (operatorItem)
    throw new AccessDeniedError(`${grant.name} is not authorized to perform ${operatorItem}: an explicit deny (operator-set items)`);
}

/** Throws AccessDeniedError when the current grant does not name `queue` in its sendsTo. */
export function requireQueueSend(queue: string): void {
  const grant = contextValue('grant');
  if (grant && !grant.sendsTo.includes(queue))
    throw new AccessDeniedError(
      `${grant.name} is not authorized to send to queue ${queue}: its row's sendsTo is [${grant.sendsTo.join(', ')}]`,
    );
}
