import { limiterKeys } from '#shared/db/rate-limit-store.ts';

/**
 * Data actions per access level; infra/ grants the tenant roles exactly these. Transactions need no action of
 * their own: TransactGetItems is authorised as GetItem, TransactWriteItems as Put/Update/Delete/ConditionCheckItem.
 */
export const TABLE_DATA_ACTIONS = {
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
  write: [
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:BatchWriteItem',
    'dynamodb:ConditionCheckItem',
  ],
} as const satisfies Record<'read' | 'write', readonly string[]>;

/** The data actions that change an item (a transaction's Put, Update and Delete are authorised as the first three). */
export const ITEM_WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'] as const;

/** IAM StringLike for a tenant uuid's 36 characters (as the tenant tag's shape): no other key family can match around it. */
const ANY_TENANT = '????????-????-????-????-????????????';

/**
 * Items inside a tenant's prefix that only an operator writes (`npm run admin`, with the stack's OperatorPolicy):
 * the rate limiter's operator-set limits (`T#<tenant>#rl#config`, `npm run admin -- set-limits`). A tenant session
 * may read them (every request's limiter does) but never change them, so a function cannot raise its own
 * tenant's limits. As IAM LeadingKeys patterns for any tenant: the write role's `T#${tenant}#*` grant admits
 * them, and StringLike cannot subtract, so infra/ denies ITEM_WRITE_ACTIONS on these keys explicitly
 * (infra/constructs/tenant-data.ts), and the local row grants refuse the same (shared/grants.ts). IAM can tell
 * them apart only because each has a partition key of its own: dynamodb:LeadingKeys is the partition key, and no
 * IAM condition key names a sort key's value. An operator-only item must therefore never share its partition key
 * with items functions write.
 */
export const OPERATOR_ONLY_LEADING_KEYS: readonly string[] = [limiterKeys.config(ANY_TENANT).PK];
