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
