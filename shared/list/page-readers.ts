import type { BaseRecord, ListEntry } from '#shared/db/model.ts';
import { matchValue, type ParsedFilter, type ParsedSort } from '#shared/list/filter.ts';
import type { Position } from '#shared/list/cursor.ts';
import type { Loader } from '#shared/list/entity-cache.ts';
import type { ItemFilter } from '#shared/list/engine.ts';
import type { AttrDef, ListPlan } from '#shared/list/resource.ts';
import type { Sizing } from '#shared/list/streams.ts';

/**
 * The list engine's three ways of cutting a page from a plan's key stream (shared/list/engine.ts picks one by the
 * page's shape, shared/list/page-shape.ts): a read model's first page with its records checked, keys only (just
 * the page's items fetched), or every candidate's item fetched and filtered.
 */

/** What every page reader is given: the plan's key stream and where the page lies in it. */
export interface PageInput<R> {
  entries: AsyncGenerator<ListEntry>;
  /** The caller's check on an index entry (ListRun.entryFilter), without reading the item. */
  accepted(e: ListEntry): boolean;
  /** The records of these ids as a list reads them: in id order, vanished ones skipped. */
  load(ids: string[]): Promise<R[]>;
  plan: ListPlan<R>;
  perPage: number;
  skip: number;
  wanted: number;
  /** Every matching key is walked (a count without a counter). */
  walkAll: boolean;
}

export interface PageFound<R> {
  records: R[];
  /** The matching records counted: those up to the page and one past it, or all of them when walked (0 on a verified page: it has no count). */
  total: number;
  hasNext: boolean;
  /** The list sort key of the page's last record. */
  lastKey?: string;
  /** The position of the page's last record in a sort done in memory. */
  memoryLast?: Position;
  /** The plan's promised count, when the page's keys were read while it was on its way (PageShape.speculative). */
  counted?: number;
}

/**
 * A first page a read model served: its keys, then its records checked (the read model lags the table); a
 * record that fails is replaced by the next key's. `next` comes from the keys, as on any keys-only page.
 */
export async function readVerifiedPage<R>({ entries, accepted, load, plan, perPage }: PageInput<R>): Promise<PageFound<R>> {
  const records: R[] = [];
  let lastKey: string | undefined;
  const nextAccepted = async () => {
    for (let r = await entries.next(); !r.done; r = await entries.next()) if (accepted(r.value)) return r.value;
    return undefined;
  };
  let exhausted = false;
  while (records.length < perPage && !exhausted) {
    const ids: string[] = [];
    while (ids.length < perPage - records.length) {
      const e = await nextAccepted();
      if (!e) {
        exhausted = true;
        break;
      }
      ids.push(e.id);
      lastKey = e.sortKey;
    }
    records.push(...(await load(ids)).filter((r) => plan.verify!(r)));
  }
  const hasNext = !exhausted && (await nextAccepted()) !== undefined;
  return { records, total: 0, hasNext, lastKey };
}

/**
 * Keys only: the page's ids are found on the index entries and only their items are read. `speculative`: the
 * plan's count is promised, and the keys are walked on to count when it does not come.
 */
export async function readKeysPage<R>(
  { entries, accepted, load, plan, perPage, skip, wanted, walkAll }: PageInput<R>,
  sizing: Sizing,
  speculative: boolean,
): Promise<PageFound<R>> {
  let total = 0;
  let lastKey: string | undefined;
  let counted: number | undefined;
  const pageIds: string[] = [];
  let pageRead: Promise<R[]> | undefined;
  // the loader keeps id order and skips vanished items; awaited below, unless the count's walk fails first
  const readPage = () => {
    if (!pageRead) (pageRead = load(pageIds)).catch(() => undefined);
    return pageRead;
  };
  // The keys left to count are read at once (whole 1 MB pages) while the page's items are read.
  const countOn = () => {
    sizing.toEnd = true;
    void readPage();
  };
  // next() by hand: a for-await `break` would close the stream, and a promised count that does not come walks on
  for (let r = await entries.next(); !r.done; r = await entries.next()) {
    if (!accepted(r.value)) continue;
    if (total >= skip && total < skip + perPage) {
      pageIds.push(r.value.id);
      lastKey = r.value.sortKey;
    }
    total++;
    if (total >= wanted && !walkAll) break;
    if (total >= skip + perPage && walkAll && !pageRead) countOn();
  }
  if (speculative && (counted = await plan.count) === undefined) {
    countOn();
    for (let r = await entries.next(); !r.done; r = await entries.next()) if (accepted(r.value)) total++;
  }
  const hasNext = total > skip + perPage;
  return { records: await readPage(), total, hasNext, lastKey, counted };
}

/** What the items reader needs besides the stream: the checks made on each fetched item, and a memory sort's. */
export interface ItemChecks<R> {
  /** The caller's item filter (ListRun.itemFilter), settled. */
  itemFilter: ItemFilter<R> | undefined;
  /** The filters the plan does not serve. */
  residual: ParsedFilter[];
  attributes: ReadonlyMap<string, AttrDef<R>>;
  loader: Loader;
  memorySort: ParsedSort | undefined;
  /** A cursor page's start: the position of the last record of the page before. */
  after: Position | undefined;
}

/** Every candidate's item fetched and checked (residual filters, the caller's item filter, the plan's verify), and a memory sort made. */
export async function readItemsPage<R extends BaseRecord>(
  { entries, accepted, load, plan, perPage, skip, wanted, walkAll }: PageInput<R>,
  { itemFilter, residual, attributes, loader, memorySort, after }: ItemChecks<R>,
): Promise<PageFound<R>> {
  let total = 0;
  let records: R[] = [];
  let lastKey: string | undefined;
  let memoryLast: Position | undefined;
  // the list sort key of each id read, for the page's last position (and a sort's tiebreak)
  const keyOf = new Map<string, string>();
  const matched: R[] = [];
  let batch: ListEntry[] = [];
  const flush = async () => {
    // a long walk reads up to 10 batches of 100 items at once (each BatchGetItem holds 100)
    const chunks: string[][] = [];
    for (let i = 0; i < batch.length; i += 100) chunks.push(batch.slice(i, i + 100).map((e) => e.id));
    const fetched = (await Promise.all(chunks.map((ids) => load(ids)))).flat();
    batch = [];
    const keep = itemFilter ? await itemFilter(fetched) : undefined;
    for (const [i, r] of fetched.entries()) {
      if (keep && !keep[i]) continue;
      if (plan.verify && !plan.verify(r)) continue;
      if (await matchesAll(r, residual, attributes, loader)) {
        if (memorySort) matched.push(r);
        else {
          if (total >= skip && total < skip + perPage) {
            records.push(r);
            lastKey = keyOf.get(r.uuid);
          }
          total++;
        }
      }
    }
  };
  // Fetch candidates in batches sized to what the page still needs (doubling up to 1,000), so a selective
  // driver with a residual filter reads about what it returns, and a broad one walks at ten batches a step.
  let lastBatch = 0;
  for await (const e of entries) {
    if (!accepted(e)) continue;
    batch.push(e);
    keyOf.set(e.id, e.sortKey);
    const need = memorySort || walkAll ? 1000 : Math.min(1000, Math.max(wanted - total, lastBatch * 2, 1));
    if (batch.length >= need) {
      lastBatch = batch.length;
      await flush();
    }
    if (!memorySort && !walkAll && total >= wanted) break;
  }
  if (batch.length) await flush();
  if (memorySort) {
    const attr = attributes.get(memorySort.attribute)!;
    const keyed = await Promise.all(
      matched.map(async (r) => ({ r, p: { v: (await attr.get(r, loader)) ?? null, k: keyOf.get(r.uuid)! } as Position })),
    );
    const order = positionOrder(memorySort.direction === 'desc');
    keyed.sort((a, b) => order(a.p, b.p));
    // a cursor page: the records past the cursor's position in the same order
    const rest = after ? keyed.filter((x) => order(x.p, after) > 0) : keyed;
    total = rest.length;
    const onPage = rest.slice(skip, skip + perPage);
    records = onPage.map((x) => x.r);
    memoryLast = onPage[onPage.length - 1]?.p;
  }
  const hasNext = total > skip + perPage;
  return { records, total, hasNext, lastKey, memoryLast };
}

async function matchesAll<R extends BaseRecord>(
  r: R,
  filters: ParsedFilter[],
  attributes: ReadonlyMap<string, AttrDef<R>>,
  loader: Loader,
): Promise<boolean> {
  for (const f of filters) {
    const v = await attributes.get(f.attribute)!.get(r, loader);
    if (!matchValue(v, f)) return false;
  }
  return true;
}

/**
 * The list order of positions (contract 4): by value, records without one last in both directions, then by
 * creation key (oldest first) in both directions.
 */
function positionOrder(desc: boolean) {
  return (a: Position, b: Position): number => {
    const na = a.v === null || a.v === undefined;
    const nb = b.v === null || b.v === undefined;
    const byValue = na || nb ? (na === nb ? 0 : na ? 1 : -1) : compare(a.v, b.v) * (desc ? -1 : 1);
    return byValue || (a.k < b.k ? -1 : a.k > b.k ? 1 : 0);
  };
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b));
}
