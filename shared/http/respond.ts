import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import { json } from '#shared/http/json.ts';
import type { ApiResult } from '#shared/http/middleware/internal.ts';
import type { ListResult } from '#shared/list/engine.ts';

/** `data = { type, record, checks, access_source }` (contract section 2). */
export function recordResponse(status: number, type: string, record: unknown, checks: Checks, accessSource: AccessSource): ApiResult {
  return json(status, { data: { type, record, checks, access_source: accessSource } });
}

/** `data = { type, records, pagy, checks, filters }` (contract section 2). */
export function listResponse<R>(type: string, result: ListResult<R>, records: unknown[], checks: Checks): ApiResult {
  return json(200, { data: { type, records, pagy: result.pagy, checks, filters: result.filters } });
}
