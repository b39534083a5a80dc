import { AppError } from '#shared/errors.ts';

/** Errors of the HTTP transport and safe retries (contract section 11), mapped like every AppError in api.ts. */
export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super(413, 'payload_too_large', `Request body is larger than ${limitBytes} bytes`);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(received: string | undefined, accepted: readonly string[]) {
    super(
      415,
      'unsupported_media_type',
      `Content-Type ${received ? `"${received}"` : '(none)'} is not supported here; send ${accepted.join(' or ')}`,
      [{ field: 'Content-Type', code: 'unsupported', message: `expected ${accepted.join(' or ')}` }],
    );
  }
}

export class HeadersTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super(431, 'headers_too_large', `Request headers are larger than ${limitBytes} bytes`);
  }
}

export class IdempotencyKeyInUseError extends AppError {
  constructor() {
    super(409, 'idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry later');
  }
}

export class IdempotencyKeyReusedError extends AppError {
  constructor() {
    super(422, 'idempotency_key_reused', 'This Idempotency-Key was used with a different request (another path or body)', [
      { field: 'Idempotency-Key', code: 'reused', message: 'already used with another path or body' },
    ]);
  }
}
