/**
 * Typed domain errors. Handlers and domain code throw these; `shared/http/api.ts` is the one place
 * that turns them into HTTP responses in the contract's error shape (contract section 1).
 */
export interface ErrorDetail {
  field?: string;
  code: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, details: ErrorDetail[] = []) {
    super(400, 'bad_request', message, details);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'Authentication required') {
    super(401, 'unauthorized', message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'You do not have permission to do this') {
    super(403, 'forbidden', message);
  }
}

export class NotFoundError extends AppError {
  constructor(resource: string, id?: string) {
    super(404, 'not_found', id ? `${resource} ${id} not found` : `${resource} not found`);
  }
}

export class ValidationError extends AppError {
  constructor(message: string, details: ErrorDetail[] = []) {
    super(422, 'validation_failed', message, details);
  }

  /** A single-field rule violation, the common case. */
  static field(field: string, code: string, message: string): ValidationError {
    return new ValidationError(message, [{ field, code, message }]);
  }
}

export class TakenError extends AppError {
  constructor(field: string, message: string) {
    super(422, 'taken', message, [{ field, code: 'taken', message }]);
  }
}

export class HasDependentsError extends AppError {
  constructor(message: string, details: ErrorDetail[] = []) {
    super(422, 'has_dependents', message, details);
  }
}

export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(429, 'rate_limited', 'Too many requests', [], { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}

/** A write lost an optimistic-concurrency race; retried internally, surfaced only when retries run out. */
export class ConcurrentUpdateError extends AppError {
  constructor() {
    super(409, 'conflict', 'The resource was changed concurrently; retry the request');
  }
}

/**
 * A transaction DynamoDB cancelled because another one was under way on one of its items
 * (TransactionConflict): nothing was written and no condition failed, so the same write may simply be made
 * again. A ConcurrentUpdateError, so every read-decide-write retry takes it as a lost race; a write that reads
 * a failed condition as "already done" must not (conditionFailed).
 */
export class TransactionConflictError extends ConcurrentUpdateError {}

/** A write's condition failed: the item is not as the write required (already there, changed, gone), unlike a transaction conflict. */
export const conditionFailed = (err: unknown): err is ConcurrentUpdateError =>
  err instanceof ConcurrentUpdateError && !(err instanceof TransactionConflictError);

/** DynamoDB's TransactWriteItems limit: a change needing more is refused whole (never split, never half-applied). */
export const MAX_TRANSACTION_ITEMS = 100;

/**
 * A change that does not fit one atomic transaction: 422 `too_many`, naming the field to send less of.
 * Raised in one place, the store's transaction commit (shared/db/write-tx.ts), or earlier by a rule that knows.
 */
export class TooManyWritesError extends AppError {
  constructor(field: string | undefined, hint = 'Delete or change fewer goals or associations at once.') {
    super(422, 'validation_failed', `This change needs more than ${MAX_TRANSACTION_ITEMS} writes in one atomic transaction. ${hint}`, [
      { field, code: 'too_many', message: `at most ${MAX_TRANSACTION_ITEMS} items per atomic write` },
    ]);
  }
}
