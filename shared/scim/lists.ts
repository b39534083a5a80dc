import type { DomainCtx } from '#shared/domain/context.ts';
import type { ListResult } from '#shared/list/engine.ts';
import { LIST_URN } from '#shared/scim/resources.ts';
import type { ScimPage } from '#shared/scim/query.ts';

/** RFC 7644 section 3.4.2: the list answer. */
export const listResponse = <T>(total: number, page: ScimPage, resources: T[]) => ({
  schemas: [LIST_URN],
  totalResults: total,
  startIndex: page.startIndex,
  itemsPerPage: resources.length,
  Resources: resources,
});

type ListFn<R> = (ctx: DomainCtx, pairs: Array<[string, string]>) => Promise<ListResult<R>>;

/** One page of the whole list (creation order, as the REST list), with the total: the list engine with `offset`. */
export async function pageOf<R>(ctx: DomainCtx, list: ListFn<R>, page: ScimPage): Promise<{ total: number; records: R[] }> {
  const result = await list(ctx, [
    ['offset', String(page.startIndex - 1)],
    ['per_page', String(Math.max(1, page.count))],
    ['count', 'true'],
  ]);
  return { total: result.pagy.count ?? result.records.length, records: page.count === 0 ? [] : result.records };
}

/** Every record of the list that `keep` accepts, read page by page (Queries of the tenant's list, no Scan): `co`/`sw` filters. */
export async function walk<R>(ctx: DomainCtx, list: ListFn<R>, keep: (r: R) => boolean): Promise<R[]> {
  const out: R[] = [];
  for (let page = 1; ; page++) {
    const result = await list(ctx, [
      ['page', String(page)],
      ['per_page', '100'],
    ]);
    out.push(...result.records.filter(keep));
    if (!result.pagy.next) return out;
  }
}

/** A page of records already found (a look-up or a walk). */
export const slice = <R>(found: R[], page: ScimPage) => ({
  total: found.length,
  records: found.slice(page.startIndex - 1, page.startIndex - 1 + page.count),
});
