import { createHash } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { config } from '#shared/config.ts';
import type { Db } from '#shared/db/client.ts';
import type { IdempotentCall } from '#shared/db/idempotency-store.ts';
import { BadRequestError } from '#shared/errors.ts';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from '#shared/http/http-errors.ts';
import { idSeedOf, withIdSeed } from '#shared/ids.ts';
import { emitMetric } from '#shared/observability/emit.ts';
import type { ReadBody } from '#shared/http/transport.ts';

type Result = APIGatewayProxyStructuredResultV2;

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
const REPLAYED_HEADER = 'Idempotent-Replayed';
/** 1-255 visible ASCII characters (contract section 11). */
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** The request's Idempotency-Key, if any; 400 when it is not 1-255 visible ASCII characters. */
export function idempotencyKeyOf(headers: Record<string, string | undefined> | undefined): string | undefined {
  const key = headers?.[IDEMPOTENCY_KEY_HEADER];
  if (key === undefined) return undefined;
  if (!KEY_RE.test(key)) {
    const message = 'Idempotency-Key must be 1 to 255 visible ASCII characters';
    throw new BadRequestError(message, [{ field: 'Idempotency-Key', code: 'invalid', message }]);
  }
  return key;
}

/** Object keys sorted at every level, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same body. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  return value;
}

/**
 * The hash a replay must match: the path parameters and the body (JSON compared by value, other media types byte
 * for byte). The record is keyed by the route template, so the same key on `/goals/{A}/archive` then
 * `/goals/{B}/archive` is the same record with another request: 422 `idempotency_key_reused`, never A's answer.
 */
export function requestHash(params: Record<string, string>, body: ReadBody): string {
  const text =
    body.kind === 'none'
      ? 'none'
      : body.kind === 'json'
        ? `json:${JSON.stringify(canonical(body.value))}`
        : `${body.mediaType}:${body.text}`;
  return createHash('sha256')
    .update(JSON.stringify([canonical(params), text]))
    .digest('base64url');
}

/**
 * An answer that holds a secret (a new webhook's signing secret) is stored for replays sealed with the secret box
 * (KMS deployed), bound to the idempotency record (its key starts with the tenant), never in clear; the caller
 * gets it opened, first time and on every replay alike.
 */
async function sealedBody(result: Result, recordKey: string, direction: 'seal' | 'open'): Promise<Result> {
  if (result.body === undefined) return result;
  const { secretBox } = await import('#shared/auth/secret-box.ts');
  return { ...result, body: await secretBox()[direction](result.body, { idempotency_record: recordKey }) };
}

/** Thrown inside the idempotent section for a 5xx answer, so Powertools drops the record (the key is not kept). */
class ServerErrorResult extends Error {
  constructor(readonly result: Result) {
    super('5xx result');
  }
}

/**
 * Runs `run` at most once per (tenant, user, route, key) within 24 hours, with Powertools idempotency:
 * the first answer is stored (any status below 500 but 429) and returned again with `Idempotent-Replayed: true`;
 * other path parameters or a different body are 422 `idempotency_key_reused`, a first request still running
 * 409 `idempotency_key_in_use`; a 5xx or 429 answer (nothing was done; an import refused for the tenant's imports in flight is meant to be sent again) or a crash deletes the record, so the key can be retried.
 * Whatever store fault follows the lock (its put answered an error, saving the answer or removing the lock
 * failed), the attempt answers only once its lock is gone or expired (TenantIdempotencyStore), so a resend after
 * a 5xx is never 409; it runs again with the same ids and finds what a write that applied left. `run`
 * returns 4xx as responses. A stored success is returned only after `authorizeReplay` passes: the route's
 * permission checks for the caller as it is now (a demoted admin gets the 403, not a webhook's secret again).
 * A stored refusal is replayed as is: it holds nothing the caller could not get again.
 */
export async function runIdempotent(
  scope: {
    db: Db;
    tenantId: string;
    userId: string;
    route: string;
    params: Record<string, string>;
    key: string;
    body: ReadBody;
    context: Context;
    sealed?: boolean;
    authorizeReplay: () => Promise<void>;
  },
  run: () => Promise<Result>,
): Promise<Result> {
  // Loaded on the first request that carries an Idempotency-Key, not at cold start (most requests never do).
  const [{ IdempotencyConfig, makeIdempotent }, { IDEMPOTENCY_TTL_SECONDS, idempotencyRecordKey, idempotencyStoreFor }, { idSeedSecret }] =
    await Promise.all([
      import('@aws-lambda-powertools/idempotency'),
      import('#shared/db/idempotency-store.ts'),
      import('#shared/auth/id-seed-secret.ts'),
    ]);
  const idempotencyConfig = new IdempotencyConfig({
    payloadValidationJmesPath: 'request_hash',
    expiresAfterSeconds: IDEMPOTENCY_TTL_SECONDS,
    responseHook: (response) => {
      const r = response as Result;
      return { ...r, headers: { ...r.headers, [REPLAYED_HEADER]: 'true' } };
    },
  });
  // The in-progress lock expires with the function's timeout, so a crashed attempt does not block the key for a day;
  // an attempt that could not remove it answers no earlier than that (shared/db/idempotency-store.ts).
  idempotencyConfig.registerLambdaContext(scope.context);
  const once = makeIdempotent(
    async (call: IdempotentCall) => {
      // Ids seeded by the request: a retry after a crash between commit and record names the same records (shared/ids.ts).
      const seed = idSeedOf(await idSeedSecret(), {
        tenantId: call.tenantId,
        userId: call.userId,
        route: call.route,
        key: call.key,
        requestHash: call.request_hash,
      });
      const result = await withIdSeed(seed, run);
      // a 429 too: nothing was done, and the same request is meant to be sent again later
      if ((result.statusCode ?? 200) >= 500 || result.statusCode === 429) throw new ServerErrorResult(result);
      return scope.sealed ? sealedBody(result, idempotencyRecordKey(call), 'seal') : result;
    },
    { persistenceStore: idempotencyStoreFor(config.tableName, scope.db), config: idempotencyConfig },
  );
  const call: IdempotentCall = {
    tenantId: scope.tenantId,
    userId: scope.userId,
    route: scope.route,
    key: scope.key,
    request_hash: requestHash(scope.params, scope.body),
  };
  try {
    const result = (await once(call)) as Result;
    // Before anything stored is opened or returned; a refusal throws here and is answered as any other.
    if (result.headers?.[REPLAYED_HEADER] === 'true' && (result.statusCode ?? 200) < 400) await scope.authorizeReplay();
    if (result.headers?.[REPLAYED_HEADER] === 'true') await emitMetric('IdempotentReplays');
    return scope.sealed ? await sealedBody(result, idempotencyRecordKey(call), 'open') : result;
  } catch (err) {
    if (err instanceof ServerErrorResult) return err.result;
    const name = (err as Error)?.name;
    if (name === 'IdempotencyAlreadyInProgressError') throw new IdempotencyKeyInUseError();
    if (name === 'IdempotencyValidationError') throw new IdempotencyKeyReusedError();
    throw err;
  }
}
