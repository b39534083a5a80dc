import type { ParsedFilter, ParsedSort } from '#shared/list/filter.ts';
import type { PageParams } from '#shared/list/params.ts';
import type { ListPlan } from '#shared/list/resource.ts';

/** The parsed query a page is shaped by. */
export interface PageQuery {
  filters: ParsedFilter[];
  sort?: ParsedSort;
  page: PageParams;
}

/** How a page is read from a plan's keys, and how many of them the first Query asks for. */
export interface PageShape {
  /** The key stream is read newest first (creation order, descending). */
  descending: boolean;
  /** The sort done in memory over every matching record (a sort the plan's stream does not give). */
  memorySort: ParsedSort | undefined;
  /** The page is found on the fetched items (residual filters, a memory sort, the caller's item filter, a plan to verify). */
  needItems: boolean;
  /** A first page of a read model's keys whose records are checked (shared/list/page-readers.ts, readVerifiedPage). */
  verifying: boolean;
  /** count=true without a counter: every matching key is walked. */
  walkAll: boolean;
  /** Keys only, read while a promised count is on its way (counted on by walking if it does not come). */
  speculative: boolean;
  /** The matching records before the page. */
  skip: number;
  /** The records to find: the page and one past it. */
  wanted: number;
  /** The keys the first Query asks for; undefined: no Limit. */
  firstChunk: number | undefined;
}

/**
 * What the page needs of a plan's keys: `filtering` when the caller's item filter applies (before the gate, a
 * filter still to be decided is taken as none: only the first Query's size depends on it).
 */
export function pageShape<R>(p: ListPlan<R>, { filters, sort, page }: PageQuery, filtering: boolean): PageShape {
  const residuals = filters.some((f) => !p.served.includes(f));
  const descending = !p.ordered && sort?.attribute === 'created_at' && sort.direction === 'desc';
  const memorySort = sort && sort.attribute !== 'created_at' && !p.ordered ? sort : undefined;
  const skip = (page.page - 1) * page.perPage + page.offset - (p.skipped ?? 0);
  // a first page of a read model's keys checks just its records; a later one (or a count) checks every record before it too
  const verifying = !!p.verify && !residuals && !memorySort && !filtering && skip === 0 && !page.count;
  const needItems = residuals || !!memorySort || filtering || (!!p.verify && !verifying);
  // keys only: the page is read while a promised count is on its way (counted on by walking if it does not come)
  const speculative = page.count && p.count instanceof Promise && !needItems;
  const walkAll = page.count && !speculative && p.count === undefined; // count=true without a counter: every matching key is walked
  const wanted = skip + page.perPage + 1; // one past the page tells whether there is a next page
  // Read no more index keys than the page needs (plus a quarter, at most 10, for entries the caller cannot
  // see): a Query without Limit would read up to 1 MB of keys for a 20-record page. A deep page's keys come in
  // one Query. (27 keys of a page of 20 stay within 8 KB, 1 RCU.)
  const firstChunk = walkAll || memorySort ? undefined : Math.min(wanted + Math.min(10, Math.ceil(wanted / 4)), 3000);
  return { descending, memorySort, needItems, verifying, walkAll, speculative, skip, wanted, firstChunk };
}
