import { keys } from '#shared/db/keys.ts';
import { entryPartitionOf, getEntities, queryList, type BaseRecord, type DataCtx, type EntityDef, type EntryList, type ListEntry } from '#shared/db/store.ts';
import { attributeMap, matchValue, parseFilters, type AttrType, type ParsedFilter, type ParsedSort } from '#shared/list/filter.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import { parsePageParams, type PageParams } from '#shared/list/params.ts';

/**
 * The list planner and executor shared by every list endpoint.
 *
 * Plan: a resource may plan itself from its read models (`ListResource.plan`: the goal lists pick the most
 * selective composite list the counters point to, and take `count` from them). Otherwise one filter that an
 * index can serve (eq/in on an attribute with `index`) becomes the *driver*: the list is read from that
 * index's partition(s) instead of the resource's whole list. Every other filter is a *residual*, checked on
 * the fetched items. With no residual, paging walks index keys only (projected id/vis/acl/state) and fetches
 * just the page's items; with residuals it fetches candidates in batches sized to what the page still needs
 * and stops once the page (plus one record, to know `next`) is found. Nothing is refused for size: a broad
 * residual filter reads what it must (docs/architecture.md, "Filters").
 */
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

/** What a resource's own planner sees: the parsed query, before anything is read. */
export interface ListQuery {
  filters: ParsedFilter[];
  sort?: ParsedSort;
  page: PageParams;
  env: IndexEnv;
}

/** A plan a resource made from its read models (see ListResource.plan). */
export interface ListPlan<R> {
  source: IndexSource;
  /** Filters the source serves: not residuals; `verify` re-checks them on the fetched items (read models lag the table). */
  served: ParsedFilter[];
  verify?(r: R): boolean;
  /** The source yields records in the order `q[s]` asks (no in-memory sort), `descending` when read backwards. */
  ordered?: boolean;
  descending?: boolean;
  /**
   * The exact number of records the list holds for this caller (from counters): `count=true` walks nothing.
   * A promise lets the page's keys be read meanwhile; resolving undefined, on a plan without residuals, makes
   * the engine walk on to count.
   */
  count?: number | Promise<number | undefined>;
}

export interface ListResource<R extends BaseRecord> {
  /** `type` in the response (`user`, `objective`, ...). */
  type: string;
  entity: EntityDef<R>;
  /** GSI1 list partitions holding every record of the resource (creation order). */
  lists: string[];
  attributes: Record<string, AttrDef<R>>;
  /** Attributes tried as driver first, most selective first. Defaults to declaration order. */
  driverOrder?: string[];
  /** A plan from the resource's read models, or undefined for the generic plan (driver + residuals). */
  plan?(query: ListQuery): Promise<ListPlan<R> | undefined>;
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

  const plan = (await resource.plan?.({ filters, sort, page, env })) ?? (await genericPlan(resource, attributes, filters, env));
  const source = plan.source;
  const residual = filters.filter((f) => !plan.served.includes(f));

  const descending = plan.ordered ? !!plan.descending : sort?.attribute === 'created_at' && sort.direction === 'desc';
  const memorySort = sort && sort.attribute !== 'created_at' && !plan.ordered ? sort : undefined;
  const needItems = residual.length > 0 || !!memorySort || !!run.itemFilter || !!plan.verify;
  // keys only: the page is read while a promised count is on its way (counted on by walking if it does not come)
  const speculative = page.count && plan.count instanceof Promise && !needItems;
  let knownCount = page.count && !speculative ? await plan.count : undefined;
  const walkAll = page.count && !speculative && knownCount === undefined; // count=true without a counter: every matching key is walked
  const skip = (page.page - 1) * page.perPage + page.offset;
  const wanted = skip + page.perPage + 1; // one past the page tells whether there is a next page

  // Read no more index keys than the page needs (plus slack for entries the caller cannot see): a Query
  // without Limit would read up to 1 MB of keys for a 20-record page. A deep page's keys come in one Query.
  const firstChunk = walkAll || memorySort ? undefined : Math.min(wanted + 10, 3000);
  const entries = entryStream(run, resource, source, descending, firstChunk);
  const accepted = (e: ListEntry) => !run.entryFilter || run.entryFilter(e, filters);

  let total = 0;
  let pageRecords: R[] = [];
  let hasNext = false;

  if (!needItems) {
    const pageIds: string[] = [];
    // next() by hand: a for-await `break` would close the stream, and a promised count that does not come walks on
    for (let r = await entries.next(); !r.done; r = await entries.next()) {
      if (!accepted(r.value)) continue;
      if (total >= skip && total < skip + page.perPage) pageIds.push(r.value.id);
      total++;
      if (!walkAll && total >= wanted) break;
    }
    if (speculative && (knownCount = await plan.count) === undefined) {
      for (let r = await entries.next(); !r.done; r = await entries.next()) if (accepted(r.value)) total++;
    }
    hasNext = total > skip + page.perPage;
    pageRecords = await run.loader.many(resource.entity, pageIds); // the loader keeps id order and skips vanished items
  } else {
    const matched: R[] = [];
    let batch: ListEntry[] = [];
    const flush = async () => {
      // a long walk reads up to 10 batches of 100 items at once (each BatchGetItem holds 100)
      const chunks: string[][] = [];
      for (let i = 0; i < batch.length; i += 100) chunks.push(batch.slice(i, i + 100).map((e) => e.id));
      const records = (await Promise.all(chunks.map((ids) => run.loader.many(resource.entity, ids)))).flat();
      batch = [];
      const keep = run.itemFilter ? await run.itemFilter(records) : undefined;
      for (const [i, r] of records.entries()) {
        if (keep && !keep[i]) continue;
        if (plan.verify && !plan.verify(r)) continue;
        if (await matchesAll(r, residual, attributes, run.loader)) {
          if (memorySort) matched.push(r);
          else {
            if (total >= skip && total < skip + page.perPage) pageRecords.push(r);
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
      const keyed = await Promise.all(matched.map(async (r) => ({ r, k: await attr.get(r, run.loader) })));
      // `matched` is in creation order and the sort is stable, so ties keep creation order in both directions
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
      ...(page.count ? { count: knownCount ?? total } : {}),
    },
    filters: echo,
  };
}

/** The generic plan: the first index-served eq/in filter in the resource's driver order, else the whole list. */
async function genericPlan<R extends BaseRecord>(resource: ListResource<R>, attributes: ReadonlyMap<string, AttrDef<R>>, filters: ParsedFilter[], env: IndexEnv): Promise<ListPlan<R>> {
  const order = resource.driverOrder ?? [...attributes.keys()];
  const driver = filters
    .filter((f) => (f.predicate === 'eq' || f.predicate === 'in') && attributes.get(f.attribute)!.index)
    .sort((a, b) => rank(order, a.attribute) - rank(order, b.attribute))[0];
  if (!driver) return { source: { partitions: resource.lists.map((l) => keys.entityList(env.ctx.tenantId, l)) }, served: [] };
  return { source: await attributes.get(driver.attribute)!.index!(driver.predicate === 'in' ? (driver.value as unknown[]) : [driver.value], env), served: [driver] };
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
  let first = true;
  do {
    const page = await queryList(ctx, partition, { forward: !descending, startKey, limit });
    yield* page.entries;
    startKey = page.lastKey;
    // further reads mean filtered-out entries (or a merge reading on): start small again and grow
    if (limit) limit = first ? Math.min(50, Math.max(10, limit)) : Math.min(limit * 2, 1000);
    first = false;
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
    const perPartition = firstChunk === undefined ? undefined : Math.ceil((firstChunk - 10) / source.partitions.length) + 1; // each grows when the merge needs more
    const streams = source.partitions.map((p) => partitionStream(run.ctx, p, descending, source.partitions.length === 1 ? firstChunk : perPartition));
    yield* streams.length === 1 ? streams[0]! : mergeStreams(streams, descending);
    return;
  }
  let collected: ListEntry[];
  if ('entries' in source) {
    collected = source.entries;
  } else {
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

const rank = (order: string[], a: string) => (order.indexOf(a) === -1 ? order.length : order.indexOf(a));

function compare(a: unknown, b: unknown): number {
  const na = a === null || a === undefined;
  const nb = b === null || b === undefined;
  if (na || nb) return na === nb ? 0 : na ? 1 : -1; // nulls last
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b));
}
