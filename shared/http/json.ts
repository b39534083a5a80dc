import type { ApiResult } from '#shared/http/middleware/internal.ts';

/** A JSON response. */
export const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): ApiResult => ({
  statusCode,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});
