import { createHash } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { config } from '#shared/config.ts';
import type { Db } from '#shared/db/client.ts';
import type { IdempotentCall } from '#shared/db/idempotency-store.ts';
import { BadRequestError } from '#shared/errors.ts';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from '#shared/http/http-errors.ts';
import { withIdSeed } from '#shared/ids.ts';
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
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]));
  return value;
}

/** The hash a replay's body must match: JSON compared by value, other media types byte for byte. */
export function bodyHash(body: ReadBody): string {
  const text = body.kind === 'none' ? 'none' : body.kind === 'json' ? `json:${JSON.stringify(canonical(body.value))}` : `${body.mediaType}:${body.text}`;
  return createHash('sha256').update(text).digest('base64url');
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
 * the first answer is stored (any status below 500) and returned again with `Idempotent-Replayed: true`;
 * a different body is 422 `idempotency_key_reused`, a first request still running 409 `idempotency_key_in_use`;
 * a 5xx answer or a crash deletes the record, so the key can be retried. `run` returns 4xx as responses.
 */
export async function runIdempotent(
  scope: { db: Db; tenantId: string; userId: string; route: string; key: string; body: ReadBody; context: Context; sealed?: boolean },
  run: () => Promise<Result>,
): Promise<Result> {
  // Loaded on the first request that carries an Idempotency-Key, not at cold start (most requests never do).
  const [{ IdempotencyConfig, makeIdempotent }, { IDEMPOTENCY_TTL_SECONDS, idempotencyRecordKey, idempotencyStoreFor }] = await Promise.all([
    import('@aws-lambda-powertools/idempotency'),
    import('#shared/db/idempotency-store.ts'),
  ]);
  const idempotencyConfig = new IdempotencyConfig({
    payloadValidationJmesPath: 'body_hash',
    expiresAfterSeconds: IDEMPOTENCY_TTL_SECONDS,
    responseHook: (response) => {
      const r = response as Result;
      return { ...r, headers: { ...r.headers, [REPLAYED_HEADER]: 'true' } };
    },
  });
  // The in-progress lock expires with the function's timeout, so a crashed attempt does not block the key for a day.
  idempotencyConfig.registerLambdaContext(scope.context);
  const once = makeIdempotent(
    async (call: IdempotentCall) => {
      // Ids seeded by the request: a retry after a crash between commit and record names the same records (shared/ids.ts).
      const result = await withIdSeed(`${idempotencyRecordKey(call)}#${call.body_hash}`, run);
      if ((result.statusCode ?? 200) >= 500) throw new ServerErrorResult(result);
      return scope.sealed ? sealedBody(result, idempotencyRecordKey(call), 'seal') : result;
    },
    { persistenceStore: idempotencyStoreFor(config.tableName, scope.db), config: idempotencyConfig },
  );
  const call: IdempotentCall = { tenantId: scope.tenantId, userId: scope.userId, route: scope.route, key: scope.key, body_hash: bodyHash(scope.body) };
  try {
    const result = (await once(call)) as Result;
    return scope.sealed ? await sealedBody(result, idempotencyRecordKey(call), 'open') : result;
  } catch (err) {
    if (err instanceof ServerErrorResult) return err.result;
    const name = (err as Error)?.name;
    if (name === 'IdempotencyAlreadyInProgressError') throw new IdempotencyKeyInUseError();
    if (name === 'IdempotencyValidationError') throw new IdempotencyKeyReusedError();
    throw err;
  }
}
