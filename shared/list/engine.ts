import { keys } from '#shared/db/keys.ts';
import { entryPartitionOf, getEntities, queryList, type BaseRecord, type DataCtx, type EntityDef, type EntryList, type ListEntry } from '#shared/db/store.ts';
import { BadRequestError } from '#shared/errors.ts';
import { attributeMap, matchValue, parseFilters, type AttrType, type ParsedFilter } from '#shared/list/filter.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { parsePageParams } from '#shared/list/params.ts';

/**
 * The list planner and executor shared by every list endpoint.
 *
 * Plan: one filter that an index can serve (eq/in on an attribute with `index`) becomes the *driver*: the
 * list is read from that index's partition(s) instead of the resource's whole list. Every other filter is a
 * *residual*, checked on the fetched items. With no residual, paging walks index keys only (projected
 * id/vis/acl/state) and fetches just the page's items; with residuals it fetches candidates 100 at a time
 * and stops once the page (plus one record, to know `next`) is found. A residual-only scan is bounded by
 * MAX_EXAMINED items; past that the request is refused with a hint to add an indexed filter.
 */
export const MAX_EXAMINED = 10_000;
/** Cap on entries gathered from drivers that are not partitions (ancestor walks, id lists) before sorting. */
export const MAX_COLLECTED = 20_000;

export type IndexSource = { partitions: string[] } | { entries: ListEntry[] } | { ids: string[] };

export interface AttrDef<R> {
  type: AttrType;
  /** The attribute's value for a record; an array is an association (a record matches if any element does). */
  get(r: R, loader: Loader): unknown | Promise<unknown>;
  /** Serves `eq`/`in` from an index. `values` are the filter's (coerced) values. */
  index?(values: unknown[], env: IndexEnv): Promise<IndexSource>;
}

export interface IndexEnv {
  ctx: DataCtx;
  loader: Loader;
  /** GSI1 partition of one value of a declared entry list: `<list>@<name>#<value>`. */
  entryPartition(of: EntryList, value: string): string;
}

/** The `uuid` attribute every resource has: `eq`/`in` read those records directly. */
export const uuidAttr = <R extends BaseRecord>(): AttrDef<R> => ({ type: 'string', get: (r) => r.uuid, index: async (values) => ({ ids: values as string[] }) });

/** Serves `eq`/`in` from the entry lists `<list>@<name>#<value>` of the filter's values. */
export const entryIndex = (of: EntryList) => async (values: unknown[], env: IndexEnv): Promise<IndexSource> => ({
  partitions: (values as string[]).map((v) => env.entryPartition(of, v)),
});

export interface ListResource<R extends BaseRecord> {
  /** `type` in the response (`user`, `objective`, ...). */
  type: string;
  entity: EntityDef<R>;
  /** GSI1 list partitions holding every record of the resource (creation order). */
  lists: string[];
  attributes: Record<string, AttrDef<R>>;
  /** Attributes tried as driver first, most selective first. Defaults to declaration order. */
  driverOrder?: string[];
}

export interface ListRun<R> {
  ctx: DataCtx;
  loader: Loader;
  pairs: Array<[string, string]>;
  /** Caller-specific check on an index entry (visibility, discarded state) without reading the item. */
  entryFilter?(e: ListEntry, filters: ParsedFilter[]): boolean;
  /** Caller-specific check that needs the item; receives each fetched batch, so it can load related items once per batch. */
  itemFilter?(records: R[]): Promise<boolean[]> | boolean[];
  /** Runs once the query is parsed, before anything is read: a list under a parent looks the parent up here, so a bad query is 400 whatever the parent (as on every list). */
  afterParse?(): Promise<unknown>;
}

export interface ListResult<R> {
  records: R[];
  pagy: { page: number; per_page: number; offset: number; next: number | null; prev: number | null; count?: number };
  filters: Record<string, unknown>;
}

export async function runList<R extends BaseRecord>(resource: ListResource<R>, run: ListRun<R>): Promise<ListResult<R>> {
  const { page, rest } = parsePageParams(run.pairs);
  const attributes = attributeMap(resource.attributes); // client-named: looked up in a Map only
  const { filters, sort, echo } = parseFilters(rest, attributes);
  await run.afterParse?.();
  const env: IndexEnv = { ctx: run.ctx, loader: run.loader, entryPartition: (of, value) => entryPartitionOf(run.ctx, of, value) };

  const order = resource.driverOrder ?? [...attributes.keys()];
  const driver = filters
    .filter((f) => (f.predicate === 'eq' || f.predicate === 'in') && attributes.get(f.attribute)!.index)
    .sort((a, b) => rank(order, a.attribute) - rank(order, b.attribute))[0];
  const source: IndexSource = driver
    ? await attributes.get(driver.attribute)!.index!(driver.predicate === 'in' ? (driver.value as unknown[]) : [driver.value], env)
    : { partitions: resource.lists.map((l) => keys.entityList(run.ctx.tenantId, l)) };
  const residual = filters.filter((f) => f !== driver);

  const descending = sort?.attribute === 'created_at' && sort.direction === 'desc';
  const memorySort = sort && sort.attribute !== 'created_at' ? sort : undefined;
  const needItems = residual.length > 0 || !!memorySort || !!run.itemFilter;
  const skip = (page.page - 1) * page.perPage + page.offset;
  const wanted = skip + page.perPage + 1; // one past the page tells whether there is a next page

  // Read no more index keys than the page needs (plus slack for entries the caller cannot see): a Query
  // without Limit would read up to 1 MB of keys for a 20-record page.
  const firstChunk = page.count || memorySort ? undefined : Math.min(wanted + 10, 1000);
  const entries = entryStream(run, resource, source, descending, firstChunk);
  const accepted = (e: ListEntry) => !run.entryFilter || run.entryFilter(e, filters);

  let total = 0;
  let pageRecords: R[] = [];
  let hasNext = false;

  if (!needItems) {
    const pageIds: string[] = [];
    for await (const e of entries) {
      if (!accepted(e)) continue;
      if (total >= skip && total < skip + page.perPage) pageIds.push(e.id);
      total++;
      if (!page.count && total >= wanted) break;
    }
    hasNext = total > skip + page.perPage;
    pageRecords = await run.loader.many(resource.entity, pageIds); // the loader keeps id order and skips vanished items
  } else {
    const matched: R[] = [];
    let examined = 0;
    let batch: ListEntry[] = [];
    const flush = async () => {
      examined += batch.length;
      if (examined > MAX_EXAMINED) {
        throw new BadRequestError(`This filter would read more than ${MAX_EXAMINED} records; add a filter an index can serve (${indexed(resource)})`, [{ code: 'filter_too_broad', message: 'add an indexed filter' }]);
      }
      const records = await run.loader.many(resource.entity, batch.map((e) => e.id));
      batch = [];
      const keep = run.itemFilter ? await run.itemFilter(records) : undefined;
      for (const [i, r] of records.entries()) {
        if (keep && !keep[i]) continue;
        if (await matchesAll(r, residual, attributes, run.loader)) {
          if (memorySort) matched.push(r);
          else {
            if (total >= skip && total < skip + page.perPage) pageRecords.push(r);
            total++;
          }
        }
      }
    };
    // Fetch candidates in batches sized to what the page still needs (doubling up to 100), so a selective
    // driver with a residual filter reads about what it returns.
    let lastBatch = 0;
    for await (const e of entries) {
      if (!accepted(e)) continue;
      batch.push(e);
      const need = memorySort || page.count ? 100 : Math.min(100, Math.max(wanted - total, lastBatch * 2, 1));
      if (batch.length >= need) {
        lastBatch = batch.length;
        await flush();
      }
      if (!memorySort && !page.count && total >= wanted) break;
    }
    if (batch.length) await flush();
    if (memorySort) {
      const attr = attributes.get(memorySort.attribute)!;
      const keyed = await Promise.all(matched.map(async (r) => ({ r, k: await attr.get(r, run.loader) })));
      keyed.sort((a, b) => compare(a.k, b.k) * (memorySort.direction === 'desc' ? -1 : 1));
      total = keyed.length;
      pageRecords = keyed.slice(skip, skip + page.perPage).map((x) => x.r);
    }
    hasNext = total > skip + page.perPage;
  }

  return {
    records: pageRecords,
    pagy: {
      page: page.page,
      per_page: page.perPage,
      offset: page.offset,
      next: hasNext ? page.page + 1 : null,
      prev: page.page > 1 ? page.page - 1 : null,
      ...(page.count ? { count: total } : {}),
    },
    filters: echo,
  };
}

async function matchesAll<R extends BaseRecord>(r: R, filters: ParsedFilter[], attributes: ReadonlyMap<string, AttrDef<R>>, loader: Loader): Promise<boolean> {
  for (const f of filters) {
    const v = await attributes.get(f.attribute)!.get(r, loader);
    if (!matchValue(v, f)) return false;
  }
  return true;
}

/** One GSI1 partition read lazily in sort order, page by page, each page twice the last (up to 1,000 keys). */
async function* partitionStream(ctx: DataCtx, partition: string, descending: boolean, firstChunk: number | undefined): AsyncGenerator<ListEntry> {
  let startKey: Record<string, unknown> | undefined;
  let limit = firstChunk;
  do {
    const page = await queryList(ctx, partition, { forward: !descending, startKey, limit });
    yield* page.entries;
    startKey = page.lastKey;
    if (limit) limit = Math.min(limit * 2, 1000); // further reads mean filtered-out entries: grow the chunk
  } while (startKey);
}

/**
 * A k-way merge of sorted partitions (sharded lists, `in` filters over several entry lists), reading each
 * partition only as far as the merged order needs. An id listed in several partitions (a goal owned by two of
 * the users of an `in` filter) has the same sort key in each, so it is yielded once.
 */
async function* mergeStreams(streams: AsyncGenerator<ListEntry>[], descending: boolean): AsyncGenerator<ListEntry> {
  const heads = await Promise.all(streams.map(async (s) => ({ s, e: (await s.next()).value as ListEntry | undefined })));
  const before = (a: ListEntry, b: ListEntry) => (descending ? a.sortKey > b.sortKey : a.sortKey < b.sortKey);
  let lastKey: string | undefined;
  const lastIds = new Set<string>();
  for (;;) {
    let best: (typeof heads)[number] | undefined;
    for (const h of heads) if (h.e && (!best || before(h.e, best.e!))) best = h;
    if (!best) return;
    const e = best.e!;
    best.e = (await best.s.next()).value as ListEntry | undefined;
    if (e.sortKey !== lastKey) {
      lastKey = e.sortKey;
      lastIds.clear();
    }
    if (lastIds.has(e.id)) continue;
    lastIds.add(e.id);
    yield e;
  }
}

async function* entryStream<R extends BaseRecord>(run: ListRun<R>, resource: ListResource<R>, source: IndexSource, descending: boolean, firstChunk: number | undefined): AsyncGenerator<ListEntry> {
  if ('partitions' in source) {
    const perPartition = firstChunk === undefined ? undefined : Math.max(10, Math.ceil(firstChunk / source.partitions.length) + 5);
    const streams = source.partitions.map((p) => partitionStream(run.ctx, p, descending, source.partitions.length === 1 ? firstChunk : perPartition));
    yield* streams.length === 1 ? streams[0]! : mergeStreams(streams, descending);
    return;
  }
  let collected: ListEntry[];
  if ('entries' in source) {
    collected = source.entries;
  } else {
    if (source.ids.length > MAX_COLLECTED) throw tooBroad();
    const found = await getEntities(run.ctx, resource.entity, source.ids);
    collected = [];
    for (const s of found.values()) {
      run.loader.prime(resource.entity, s.record);
      collected.push({ id: s.record.uuid, sortKey: keys.listSortKey(s.record.created_at, s.record.uuid), ...(resource.entity.envelope?.(s.record) ?? {}) });
    }
  }
  const seen = new Set<string>();
  const unique = collected.filter((e) => !seen.has(e.id) && seen.add(e.id));
  unique.sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0) * (descending ? -1 : 1));
  yield* unique;
}

const tooBroad = () => new BadRequestError(`This filter matches more than ${MAX_COLLECTED} records; narrow it`, [{ code: 'filter_too_broad', message: 'narrow the filter' }]);
const rank = (order: string[], a: string) => (order.indexOf(a) === -1 ? order.length : order.indexOf(a));
const indexed = <R extends BaseRecord>(resource: ListResource<R>) => Object.entries(resource.attributes).filter(([, a]) => a.index).map(([n]) => n).join(', ');

function compare(a: unknown, b: unknown): number {
  const na = a === null || a === undefined;
  const nb = b === null || b === undefined;
  if (na || nb) return na === nb ? 0 : na ? 1 : -1; // nulls last
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b));
}
