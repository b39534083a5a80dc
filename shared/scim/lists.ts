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

/**
 * Every record of the list that `keep` accepts (`co`/`sw` filters, and `eq` on displayName): the tenant's whole
 * list, read in pages of 100, each a Query of the tenant's list partition (no Scan) starting at the previous
 * page's cursor, so a walk reads each key once (linear in the tenant's records; `page=N` would re-read the N-1
 * pages before it every time). Its cost is documented in the README's SCIM section.
 */
export async function walk<R>(ctx: DomainCtx, list: ListFn<R>, keep: (r: R) => boolean): Promise<R[]> {
  const out: R[] = [];
  for (let cursor: string | null = null; ; ) {
    const result: ListResult<R> = await list(ctx, [
      ['per_page', '100'],
      ...(cursor === null ? [] : [['cursor', cursor] as [string, string]]),
    ]);
    out.push(...result.records.filter(keep));
    cursor = result.pagy.next_cursor;
    if (cursor === null) return out;
  }
}

/** A page of records already found (a look-up or a walk). */
export const slice = <R>(found: R[], page: ScimPage) => ({
  total: found.length,
  records: found.slice(page.startIndex - 1, page.startIndex - 1 + page.count),
});
