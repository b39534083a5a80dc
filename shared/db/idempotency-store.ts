import { createHash } from 'node:crypto';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { Db } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { TABLE_DEFINITION } from '#shared/db/table.ts';

/** Records live 24 hours (contract section 11); the table's TTL attribute removes them. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
export const IDEMPOTENCY_KIND = 'idem';
/** Sort key of every idempotency record: a stream consumer can drop these writes by sort key alone. */
export const IDEMPOTENCY_SK = 'IDEM';

/** What identifies one idempotent request, and the hash of its path parameters and body (compared on a replay). */
export interface IdempotentCall {
  tenantId: string;
  userId: string;
  /** API route key, `POST /rest/v2/objectives`. */
  route: string;
  key: string;
  request_hash: string;
}

/** `T#<tenant>#idem#<sha256(user, route, key)>`: one item per key, spread over partitions, under the tenant's prefix. */
export function idempotencyRecordKey(call: Pick<IdempotentCall, 'tenantId' | 'userId' | 'route' | 'key'>): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([call.userId, call.route, call.key]))
    .digest('base64url');
  return keys.misc(call.tenantId, IDEMPOTENCY_KIND, digest).PK;
}

/**
 * Powertools' DynamoDB persistence layer, kept tenant-scoped. Its default key (`<function>#<hash>` in an `id`
 * attribute, or one static partition key with a sort key) would neither start with `T#<tenant>#` (IAM
 * LeadingKeys) nor spread a tenant's POSTs; so the key builder is replaced: the record's PK is
 * `T#<tenant>#idem#<hash of user, route, key>` and SK `#`. Each tenant gets its own instance over the tenant's
 * own client (the STS session confined to `T#<tenant>#*` in AWS), so a record can only be written under the
 * tenant it belongs to. Everything else (in-progress lock, payload validation, expiry) is Powertools'.
 */
export class TenantIdempotencyStore extends DynamoDBPersistenceLayer {
  constructor(tableName: string, db: Db) {
    super({
      tableName,
      keyAttr: TABLE_DEFINITION.partitionKey,
      sortKeyAttr: TABLE_DEFINITION.sortKey,
      expiryAttr: TABLE_DEFINITION.ttlAttribute,
      statusAttr: 'idem_status',
      dataAttr: 'idem_response',
      // the request hash (path parameters and body); the attribute keeps its first name, so a record written
      // before path parameters were hashed mismatches (422) rather than replays
      validationKeyAttr: 'idem_body_hash',
      inProgressExpiryAttr: 'idem_in_progress_until',
      // The document client shares the low-level client's middleware and config, so it sends Powertools' commands as is.
      awsSdkV3Client: db as unknown as DynamoDBClient,
    });
  }

  protected override getHashedIdempotencyKey(data: unknown): string {
    return idempotencyRecordKey(data as IdempotentCall);
  }

  protected override getKey(idempotencyKey: string): Record<string, AttributeValue> {
    return { [TABLE_DEFINITION.partitionKey]: { S: idempotencyKey }, [TABLE_DEFINITION.sortKey]: { S: IDEMPOTENCY_SK } };
  }
}

const stores = new WeakMap<Db, TenantIdempotencyStore>();

/** One store per client: in AWS the client is the tenant's own (cached per tenant by tenant-scope.ts). */
export function idempotencyStoreFor(tableName: string, db: Db): TenantIdempotencyStore {
  let store = stores.get(db);
  if (!store) stores.set(db, (store = new TenantIdempotencyStore(tableName, db)));
  return store;
}
