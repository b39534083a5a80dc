import type { ListResult } from '#shared/list/engine.ts';
import type { PageParams } from '#shared/list/params.ts';

/**
 * A list's answer, one envelope for every list: the engine's (runList) and a list read by hand (a goal's history),
 * the page's records and where it sits. `count` is answered only when asked for (`count=true`). Its own module, so
 * a list read by hand does not load the engine.
 */
export function listPage<R>(
  page: PageParams,
  found: { records: R[]; hasNext: boolean; fromCursor: boolean; count: number | undefined; nextCursor: string | null },
  filters: Record<string, unknown>,
): ListResult<R> {
  return {
    records: found.records,
    pagy: {
      page: page.page,
      per_page: page.perPage,
      offset: page.offset,
      // a cursor page's place is its cursor: no page numbers around it
      next: found.hasNext && !found.fromCursor ? page.page + 1 : null,
      prev: page.page > 1 && !found.fromCursor ? page.page - 1 : null,
      ...(page.count ? { count: found.count } : {}),
      next_cursor: found.nextCursor,
    },
    filters,
  };
}
