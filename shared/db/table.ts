/**
 * The single table's physical definition. Both the CDK stack (infra/) and the local stack
 * (scripts/local-stack.ts → DynamoDB Local) build the table from this object, so they cannot drift.
 * The logical layout (which items use which keys) is in keys.ts and docs/data-model.md.
 */
export const TABLE_DEFINITION = {
  partitionKey: 'PK',
  sortKey: 'SK',
  /** Epoch seconds; DynamoDB deletes the item some time after (idempotency records, resend windows, run records, stream checkpoints). */
  ttlAttribute: 'expires_at',
  /**
   * The change stream every derived state is kept from (shared/stream/): both images, so a projection sees what
   * a change moved away from (a goal's former parents) as well as where it went.
   */
  stream: { viewType: 'NEW_AND_OLD_IMAGES' },
  globalSecondaryIndexes: [
    {
      /** Creation-ordered lists: every entity's list and every association ("entry") list. */
      indexName: 'GSI1',
      partitionKey: 'GSI1PK',
      sortKey: 'GSI1SK',
      /** Only what list paging needs before fetching a page: the id and the visibility envelope. */
      nonKeyAttributes: ['id', 'vis', 'acl', 'state'],
    },
  ],
} as const;

/** The CreateTable input for DynamoDB Local (on-demand, same keys and GSIs as the CDK table). */
export function createTableInput(tableName: string) {
  const attrs = new Set<string>([TABLE_DEFINITION.partitionKey, TABLE_DEFINITION.sortKey]);
  for (const g of TABLE_DEFINITION.globalSecondaryIndexes) {
    attrs.add(g.partitionKey);
    attrs.add(g.sortKey);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE_DEFINITION.stream.viewType },
    AttributeDefinitions: [...attrs].map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: TABLE_DEFINITION.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: TABLE_DEFINITION.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: TABLE_DEFINITION.globalSecondaryIndexes.map((g) => ({
      IndexName: g.indexName,
      KeySchema: [
        { AttributeName: g.partitionKey, KeyType: 'HASH' as const },
        { AttributeName: g.sortKey, KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...g.nonKeyAttributes] },
    })),
  };
}
