import type { AccessSource, Checks } from '#shared/auth/permissions.ts';
import { json } from '#shared/http/json.ts';
import type { ApiResult } from '#shared/http/middleware/internal.ts';
import type { ListResult } from '#shared/list/engine.ts';

/** `data = { type, record, checks, access_source }` (contract section 2). */
export function recordResponse(status: number, type: string, record: unknown, checks: Checks, accessSource: AccessSource): ApiResult {
  return json(status, { data: { type, record, checks, access_source: accessSource } });
}

/**
 * Names the parts of a list's answer that a read model kept by the change stream decided (`count`, `filter`,
 * `order`, `position`): they reflect a write once the stream has applied it (within 60 s, alarmed past that), not
 * at once. Absent when the answer was read exactly.
 */
const READ_MODEL_HEADER = 'x-read-model';

/** `data = { type, records, pagy, checks, filters }` (contract section 2). */
export function listResponse<R>(type: string, result: ListResult<R>, records: unknown[], checks: Checks): ApiResult {
  const body = { data: { type, records, pagy: result.pagy, checks, filters: result.filters } };
  // Says which parts of the answer follow writes by the change stream's delay (docs/architecture.md, "Filters").
  return json(200, body, result.readModel ? { [READ_MODEL_HEADER]: result.readModel.join(', ') } : {});
}
