import type { ApiResult } from '#shared/http/middleware/internal.ts';

/** RFC 6749 section 5.1: token answers, refusals included, are never cached. */
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/**
 * Any answer of the token endpoint's chain in OAuth's clothes (RFC 6749 section 5.2), as toScimAnswer does for
 * SCIM (shared/scim/handler.ts): an error in the contract's shape (the transport's 413 or 431, the limiter's 429,
 * a 500) becomes `{ error, error_description }` with the contract's code as `error` (`payload_too_large`,
 * `rate_limited`; a 500 is RFC 6749's `server_error`), its headers (Retry-After, RateLimit, x-request-id) kept, and
 * every answer carries no-store.
 */
export function toOAuthAnswer(res: ApiResult): ApiResult {
  const headers = { ...(res.headers ?? {}), ...NO_STORE } as Record<string, string>;
  const status = res.statusCode ?? 200;
  if (status < 400 || typeof res.body !== 'string') return { ...res, headers };
  let code: unknown;
  let message: unknown;
  try {
    ({ code, message } = (JSON.parse(res.body) as { error?: { code?: unknown; message?: unknown } }).error ?? {});
  } catch {
    return { ...res, headers };
  }
  if (typeof code !== 'string') return { ...res, headers }; // already OAuth's: `error` is a string, not the contract's object
  const body = { error: code === 'internal' ? 'server_error' : code, error_description: typeof message === 'string' ? message : '' };
  return { ...res, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) };
}
