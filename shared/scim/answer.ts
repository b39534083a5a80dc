import type { ApiResult } from '#shared/http/middleware/internal.ts';
import { scimError } from '#shared/scim/errors.ts';

export const SCIM_MEDIA_TYPE = 'application/scim+json';

/**
 * Any answer of the chain in SCIM's clothes: JSON becomes application/scim+json, and an error in the contract's
 * shape (a refusal of the transport, the caller check, the limiter, the body check or the domain) becomes SCIM's
 * error (RFC 7644 section 3.12; shared/scim/errors.ts), its headers (Retry-After, RateLimit, x-request-id) kept.
 */
export function toScimAnswer(res: ApiResult): ApiResult {
  const headers = { ...(res.headers ?? {}) } as Record<string, string>;
  const type = headers['content-type'];
  if (type?.startsWith('application/json')) headers['content-type'] = SCIM_MEDIA_TYPE;
  const status = res.statusCode ?? 200;
  if (status < 400 || typeof res.body !== 'string') return { ...res, headers };
  let parsed: { error?: { status?: number; code?: string; message?: string; details?: Array<{ field?: string; message: string }> } };
  try {
    parsed = JSON.parse(res.body);
  } catch {
    return { ...res, headers };
  }
  const e = parsed?.error;
  if (!e || typeof e.code !== 'string') return { ...res, headers };
  const { httpStatus, ...body } = scimError(status, e.code, e.message ?? '', e.details ?? []);
  return { ...res, statusCode: httpStatus, headers: { ...headers, 'content-type': SCIM_MEDIA_TYPE }, body: JSON.stringify(body) };
}
