import { TransactionCanceledException, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { AppError, TransactionConflictError } from '#shared/errors.ts';

/**
 * A create found its record already stored under an id seeded by the request's Idempotency-Key (shared/ids.ts):
 * an earlier attempt of this very request committed and died before its answer was recorded. The command
 * answers with the stored record instead of writing a second one (`createdOrStored`).
 */
export class AlreadyCreatedError extends AppError {
  constructor(
    readonly type: string,
    readonly uuid: string,
  ) {
    super(409, 'conflict', 'The record this request creates is already stored');
  }
}

/** What a transaction's failed condition means: the typed error of the operation that carried it. */
export type ConditionFailure = (reason: { Item?: unknown }) => AppError;

/**
 * The error a failed TransactWriteItems stands for: the typed error of its first failed condition ("already
 * created" first: it explains every other failed condition of a replayed transaction, the claims taken by
 * itself), a TransactionConflictError when DynamoDB cancelled it for another transaction under way (nothing
 * written, nothing failed), or the error itself.
 */
export function transactionError(err: unknown, failures: readonly ConditionFailure[]): unknown {
  if (err instanceof TransactionCanceledException || (err as Error).name === 'TransactionCanceledException') {
    const reasons = (err as TransactionCanceledException).CancellationReasons ?? [];
    const failed = reasons.flatMap((r, i) => (r.Code === 'ConditionalCheckFailed' ? [failures[i]!(r)] : []));
    const failure = failed.find((f) => f instanceof AlreadyCreatedError) ?? failed[0];
    if (failure) return failure;
    if (reasons.some((r) => r.Code === 'TransactionConflict')) return new TransactionConflictError();
  }
  if (err instanceof ConditionalCheckFailedException) return failures[0]!({});
  return err;
}
