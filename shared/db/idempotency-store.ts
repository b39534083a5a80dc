import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AttributeValue, type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { IdempotencyRecord } from '@aws-lambda-powertools/idempotency/persistence';
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

const STATUS_ATTR = 'idem_status';
/** The attempt that put the lock (a random token): its own lock, told from another's put in the same millisecond. */
const ATTEMPT_ATTR = 'idem_attempt';

/**
 * The client Powertools writes through, for one attempt: its lock's put carries the attempt's token. Without it,
 * two attempts of one request that put their locks in the same millisecond put equal items, and a put whose
 * first try answered 500 took the other's lock for its own (createDynamoClient's ownPutAfterAmbiguousAttempt):
 * both ran (the AWS-faithful mode at a 30 % fault rate did so).
 */
function attemptClient(db: Db, attempt: string): DynamoDBClient {
  const client = db as unknown as DynamoDBClient;
  const send = (command: object) => {
    if (command instanceof PutItemCommand && command.input.Item) command.input.Item[ATTEMPT_ATTR] = { S: attempt };
    return client.send(command as never);
  };
  return { send, config: client.config, middlewareStack: client.middlewareStack } as unknown as DynamoDBClient;
}

/**
 * Errors after which the same call may pass, as the SDK's own retry strategy classes them: throttled, a
 * transaction on the item, a 5xx, a timeout or a dropped connection. Anything else (a failed condition, a bug) is
 * the answer at once.
 */
const TRANSIENT = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
]);
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);
function transient(err: unknown): boolean {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  return TRANSIENT.has(e.name ?? '') || NETWORK_CODES.has(e.code ?? '') || (e.$metadata?.httpStatusCode ?? 0) >= 500;
}

/** The first pause between two tries of a lock's write, doubled each time up to MAX_PAUSE_MS (with jitter). */
const FIRST_PAUSE_MS = 50;
const MAX_PAUSE_MS = 1000;

/**
 * Powertools' DynamoDB persistence layer, kept tenant-scoped, one instance per attempt. Its default key
 * (`<function>#<hash>` in an `id` attribute, or one static partition key with a sort key) would neither start
 * with `T#<tenant>#` (IAM LeadingKeys) nor spread a tenant's POSTs; so the key builder is replaced: the record's
 * PK is `T#<tenant>#idem#<hash of user, route, key>` and SK `IDEM`. It runs over the tenant's own client (the STS
 * session confined to `T#<tenant>#*` in AWS), so a record can only be written under the tenant it belongs to.
 *
 * The in-progress lock is released or completed reliably (contract section 11: a first attempt that ended in 5xx
 * does not keep its key; docs/architecture.md, "Safe retries"): the writes after the lock is taken (saving the
 * answer, removing the lock of an attempt that failed, removing a lock whose put answered an error but may have
 * applied) are tried again on a transient error, outside the SDK's retries and its retry quota, until they land or
 * the lock has expired (its in-progress expiry: the function's remaining time). So the attempt answers only once
 * its lock is gone or expired, and a resend after that answer is never refused as still running. The lock is
 * removed only while it is this attempt's (still in progress, with this attempt's token), never a later
 * attempt's that took over. Everything else (the put's condition, payload validation, replay) is Powertools'.
 */
export class TenantIdempotencyStore extends DynamoDBPersistenceLayer {
  /** This attempt's lock once put: its in-progress expiry (epoch ms). */
  #lockUntil: number | undefined;

  constructor(
    private readonly tableName_: string,
    private readonly db: Db,
    private readonly attempt = randomUUID(),
  ) {
    super({
      tableName: tableName_,
      keyAttr: TABLE_DEFINITION.partitionKey,
      sortKeyAttr: TABLE_DEFINITION.sortKey,
      expiryAttr: TABLE_DEFINITION.ttlAttribute,
      statusAttr: STATUS_ATTR,
      dataAttr: 'idem_response',
      // the request hash (path parameters and body); the attribute keeps its first name, so a record written
      // before path parameters were hashed mismatches (422) rather than replays
      validationKeyAttr: 'idem_body_hash',
      inProgressExpiryAttr: 'idem_in_progress_until',
      // The document client shares the low-level client's middleware and config, so it sends Powertools' commands as is.
      awsSdkV3Client: attemptClient(db, attempt),
    });
  }

  protected override getHashedIdempotencyKey(data: unknown): string {
    return idempotencyRecordKey(data as IdempotentCall);
  }

  protected override getKey(idempotencyKey: string): Record<string, AttributeValue> {
    return { [TABLE_DEFINITION.partitionKey]: { S: idempotencyKey }, [TABLE_DEFINITION.sortKey]: { S: IDEMPOTENCY_SK } };
  }

  protected override async _putRecord(record: IdempotencyRecord): Promise<void> {
    this.#lockUntil = record.inProgressExpiryTimestamp;
    try {
      await super._putRecord(record);
    } catch (err) {
      // a record already there is an answer (409, 422 or a replay); any other error may follow a put that applied
      if ((err as Error).name !== 'IdempotencyItemAlreadyExistsError') await this._deleteRecord(record);
      throw err;
    }
  }

  /** Saving the answer: its failure would leave the lock in place after a write that took effect. */
  protected override async _updateRecord(record: IdempotencyRecord): Promise<void> {
    await this.#persistently(() => super._updateRecord(record));
  }

  /** Removes this attempt's lock (its function failed, or its put answered an error): only while it is still its own. */
  protected override async _deleteRecord(record: IdempotencyRecord): Promise<void> {
    await this.#persistently(() =>
      this.db
        .send(
          new DeleteCommand({
            TableName: this.tableName_,
            Key: { [TABLE_DEFINITION.partitionKey]: record.idempotencyKey, [TABLE_DEFINITION.sortKey]: IDEMPOTENCY_SK },
            ConditionExpression: '#s = :p AND #a = :a',
            ExpressionAttributeNames: { '#s': STATUS_ATTR, '#a': ATTEMPT_ATTR },
            ExpressionAttributeValues: { ':p': 'INPROGRESS', ':a': this.attempt },
          }),
        )
        // not there, or another attempt's by now: nothing of this attempt's is left
        .catch((err: Error) => (err.name === 'ConditionalCheckFailedException' ? undefined : Promise.reject(err))),
    );
  }

  /** `write` again after a transient error until it lands or this attempt's lock has expired (then the last error). */
  async #persistently(write: () => Promise<unknown>): Promise<void> {
    const until = this.#lockUntil ?? Date.now();
    for (let n = 0; ; n++) {
      try {
        await write();
        return;
      } catch (err) {
        const left = until - Date.now();
        if (!transient(err) || left <= 0) throw err;
        const pause = Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** n);
        await sleep(Math.min(left, pause / 2 + (Math.random() * pause) / 2));
      }
    }
  }
}

/** One store per attempt (it knows its own lock), over the request's client: in AWS the tenant's own (tenant-scope.ts). */
export function idempotencyStoreFor(tableName: string, db: Db): TenantIdempotencyStore {
  return new TenantIdempotencyStore(tableName, db);
}
