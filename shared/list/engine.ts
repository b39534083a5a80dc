import { keys } from '#shared/db/keys.ts';
import type { EntryList } from '#shared/db/entry-lists.ts';
import { entryPartitionOf } from '#shared/db/index-queries.ts';
import type { BaseRecord, DataCtx, EntityDef, ListEntry } from '#shared/db/model.ts';
import { attributeMap, matchValue, parseFilters, type AttrType, type ParsedFilter, type ParsedSort } from '#shared/list/filter.ts';
import { cursorBinding, openCursor, sealCursor, type Position } from '#shared/list/cursor.ts';
import type { Loader } from '#shared/list/entity-cache.ts';
import { parsePageParams, type PageParams } from '#shared/list/params.ts';
import { entryStream, started, type IndexSource, type Sizing } from '#shared/list/streams.ts';

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
 *
 * A list may start before its caller is known (`ListRun.gate`): it then plans and reads its first chunk of keys
 * while the caller is read, and judges nothing (what the caller may see) until the gate opens.
 *
 * Order (contract 4): the sort attribute's value, records without one last in both directions, ties in creation
 * order (oldest first) in both directions; every plan gives that one order. Every page answers the cursor of its
 * last record (`pagy.next_cursor`, shared/list/cursor.ts); a cursor page starts right after that record's
 * position: a stream in creation order (or a plan's ordered stream) from its key on (`IndexSource.from`), a sort
 * in memory past it in the same order, so it reads what page 1 reads.
 */
export type { IndexSource } from '#shared/list/streams.ts';

/** The most keys a list reads before its gate opens (the caller known): what a refused request may have cost. */
export const EARLY_KEYS = 200;

export interface AttrDef<R> {
  type: AttrType;
  /** The attribute's value for a record; an array is an association (a record matches if any element does). */
  get(r: R, loader: Loader): unknown | Promise<unknown>;
  /** Serves `eq`/`in` from an index. `values` are the filter's (coerced) values. */
  index?(values: unknown[], env: IndexEnv): Promise<IndexSource>;
}

/** How an ordered plan's stream keys (ListPlan.ordered) map to positions in the list's order and back. */
export interface KeyPosition {
  of(sortKey: string): Position;
  key(p: Position): string;
}

export interface IndexEnv {
  ctx: DataCtx;
  loader: Loader;
  /** GSI1 partition of one value of a declared entry list: `<list>@<name>#<value>`. */
  entryPartition(of: EntryList, value: string): string;
  /** Opens once the caller is known (ListRun.gate): an index reads its first round before, and judges nothing until then. */
  gate: Promise<unknown>;
}

/** The `uuid` attribute every resource has: `eq`/`in` read those records directly. */
export const uuidAttr = <R extends BaseRecord>(): AttrDef<R> => ({
  type: 'string',
  get: (r) => r.uuid,
  index: async (values) => ({ ids: values as string[] }),
});

/** Serves `eq`/`in` from the entry lists `<list>@<name>#<value>` of the filter's values. */
export const entryIndex =
  (of: EntryList) =>
  async (values: unknown[], env: IndexEnv): Promise<IndexSource> => ({
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
  /** The source yields records in the order `q[s]` asks (no in-memory sort), read forwards; its keys map to positions by `position`. */
  ordered?: boolean;
  position?: KeyPosition;
  /**
   * The exact number of records the list holds for this caller (from counters): `count=true` walks nothing.
   * A promise lets the page's keys be read meanwhile; resolving undefined, on a plan without residuals, makes
   * the engine walk on to count.
   */
  count?: number | Promise<number | undefined>;
  /** The source starts after this many records of the list (a page anchor placed it): the page skips that many fewer. */
  skipped?: number;
  /**
   * What of the answer a read model kept by the change stream decides (it follows writes by the stream's delay):
   * `filter` (a read-model list serves a filter: a record that matches since may be missing), `order` (the
   * read model's order), `position` (a page anchor placed the page). A count from counters adds `count`.
   */
  readModel?: ReadModelPart[];
  /**
   * The plan is taken on trust while its first keys are read (e.g. before the read models are known to be built
   * for the tenant); resolving false drops it for the generic plan.
   */
  valid?: Promise<boolean>;
}

export interface ListResource<R extends BaseRecord> {
  /** `type` in the response (`user`, `objective`, ...). */
  type: string;
  entity: EntityDef<R>;
  /** GSI1 list partitions holding every record of the resource (creation order). */
  lists: string[];
  /** Keys each of `lists` reads at least in its first Query when they are merged (IndexSource `firstRead`). */
  listsFirstRead?: number;
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
  /**
   * Caller-specific check that needs the item; receives each fetched batch, so it can load related items once per
   * batch. A promise when it depends on the caller (a list started before the caller is known): settled with the
   * gate, undefined when this caller needs none (an admin), and the list is paged as without one.
   */
  itemFilter?: ItemFilter<R> | Promise<ItemFilter<R> | undefined>;
  /** Runs once the query is parsed, before anything is read: a list under a parent looks the parent up here, so a bad query is 400 whatever the parent (as on every list). */
  afterParse?(): Promise<unknown>;
  /**
   * Opens once the caller is known, when the list started before (concurrently with the caller's read): until
   * then the engine plans and reads at most a first chunk of EARLY_KEYS keys; `entryFilter` and `itemFilter`
   * are called, and items read, only after it. A rejected gate (401, 429) stops the list.
   */
  gate?: Promise<unknown>;
}

export type ItemFilter<R> = (records: R[]) => Promise<boolean[]> | boolean[];

/** A part of a list's answer that a read model kept by the change stream decided (ListPlan.readModel). */
export type ReadModelPart = 'count' | 'filter' | 'order' | 'position';

export interface ListResult<R> {
  records: R[];
  pagy: {
    page: number;
    per_page: number;
    offset: number;
    next: number | null;
    prev: number | null;
    count?: number;
    /** Where the next page starts (contract 18); null on the last page. */
    next_cursor: string | null;
  };
  filters: Record<string, unknown>;
  /** The parts of the answer a read model decided (may lag writes by the stream's delay); absent when none did. */
  readModel?: ReadModelPart[];
}

export async function runList<R extends BaseRecord>(resource: ListResource<R>, run: ListRun<R>): Promise<ListResult<R>> {
  // settled with the gate, and awaited after it: a refused caller (or a 400 found first) must not leave it unhandled
  if (run.itemFilter instanceof Promise) run.itemFilter.catch(() => undefined);
  const { page, rest } = parsePageParams(run.pairs);
  const attributes = attributeMap(resource.attributes); // client-named: looked up in a Map only
  const { filters, sort, echo } = parseFilters(rest, attributes);
  // a cursor names its tenant, list, filters and sort: one of another is refused before anything is read
  const binding = cursorBinding([
    run.ctx.tenantId,
    resource.type,
    resource.lists,
    filters.map((f) => JSON.stringify([f.attribute, f.predicate, f.value])).sort(),
    sort ?? null,
  ]);
  const after = page.cursor === undefined ? undefined : await openCursor(binding, page.cursor);
  await run.afterParse?.();
  const gate = run.gate ?? Promise.resolve();
  const env: IndexEnv = { ctx: run.ctx, loader: run.loader, entryPartition: (of, value) => entryPartitionOf(run.ctx, of, value), gate };
  const sizing: Sizing = { toEnd: false };

  let plan = (await resource.plan?.({ filters, sort, page, env })) ?? (await genericPlan(resource, attributes, filters, env));
  // awaited below unless the list stops first (a refused caller): never an unhandled rejection
  if (plan.count instanceof Promise) plan.count.catch(() => undefined);
  plan.valid?.catch(() => undefined);
  let reading = open(plan, sizing);
  if (plan.valid) {
    const [valid] = await Promise.all([plan.valid, gate]);
    if (!valid) {
      await reading.entries.return(undefined);
      plan = await genericPlan(resource, attributes, filters, env);
      reading = open(plan, sizing);
    }
  }
  // what the caller may see, and every further read, waits for the caller
  await gate;
  const itemFilter = await run.itemFilter;
  // how the page is read, now that the caller's item filter is known (the keys already read stay good)
  const { memorySort, needItems, verifying, speculative, skip, wanted, walkAll: walksAll } = shape(plan, !!itemFilter);
  const { entries } = reading;
  const residual = filters.filter((f) => !plan.served.includes(f));
  let knownCount = page.count && !speculative ? await plan.count : undefined;
  // count=true without a counter: every matching key is walked (whole pages from here on)
  const walkAll = walksAll || (page.count && !speculative && knownCount === undefined);
  if (walkAll) sizing.toEnd = true;
  const accepted = (e: ListEntry) => !run.entryFilter || run.entryFilter(e, filters);
  // the list sort key of each id read, for the page's last position (and a sort's tiebreak)
  const keyOf = new Map<string, string>();
  let lastKey: string | undefined;

  let total = 0;
  let pageRecords: R[] = [];
  let memoryLast: Position | undefined;
  let hasNext = false;

  if (verifying) {
    // A first page a read model served: its keys, then its records checked (the read model lags the table); a
    // record that fails is replaced by the next key's. `next` comes from the keys, as on any keys-only page.
    const nextAccepted = async () => {
      for (let r = await entries.next(); !r.done; r = await entries.next()) if (accepted(r.value)) return r.value;
      return undefined;
    };
    let exhausted = false;
    while (pageRecords.length < page.perPage && !exhausted) {
      const ids: string[] = [];
      while (ids.length < page.perPage - pageRecords.length) {
        const e = await nextAccepted();
        if (!e) {
          exhausted = true;
          break;
        }
        ids.push(e.id);
        lastKey = e.sortKey;
      }
      pageRecords.push(...(await run.loader.many(resource.entity, ids, { listing: true })).filter((r) => plan.verify!(r)));
    }
    hasNext = !exhausted && (await nextAccepted()) !== undefined;
  } else if (!needItems) {
    const pageIds: string[] = [];
    let pageRead: Promise<R[]> | undefined;
    // the loader keeps id order and skips vanished items; awaited below, unless the count's walk fails first
    const readPage = () => {
      if (!pageRead) (pageRead = run.loader.many(resource.entity, pageIds, { listing: true })).catch(() => undefined);
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
      if (total >= skip && total < skip + page.perPage) {
        pageIds.push(r.value.id);
        lastKey = r.value.sortKey;
      }
      total++;
      if (total >= wanted && !walkAll) break;
      if (total >= skip + page.perPage && walkAll && !pageRead) countOn();
    }
    if (speculative && (knownCount = await plan.count) === undefined) {
      countOn();
      for (let r = await entries.next(); !r.done; r = await entries.next()) if (accepted(r.value)) total++;
    }
    hasNext = total > skip + page.perPage;
    pageRecords = await readPage();
  } else {
    const matched: R[] = [];
    let batch: ListEntry[] = [];
    const flush = async () => {
      // a long walk reads up to 10 batches of 100 items at once (each BatchGetItem holds 100)
      const chunks: string[][] = [];
      for (let i = 0; i < batch.length; i += 100) chunks.push(batch.slice(i, i + 100).map((e) => e.id));
      const records = (await Promise.all(chunks.map((ids) => run.loader.many(resource.entity, ids, { listing: true })))).flat();
      batch = [];
      const keep = itemFilter ? await itemFilter(records) : undefined;
      for (const [i, r] of records.entries()) {
        if (keep && !keep[i]) continue;
        if (plan.verify && !plan.verify(r)) continue;
        if (await matchesAll(r, residual, attributes, run.loader)) {
          if (memorySort) matched.push(r);
          else {
            if (total >= skip && total < skip + page.perPage) {
              pageRecords.push(r);
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
        matched.map(async (r) => ({ r, p: { v: (await attr.get(r, run.loader)) ?? null, k: keyOf.get(r.uuid)! } as Position })),
      );
      const order = positionOrder(memorySort.direction === 'desc');
      keyed.sort((a, b) => order(a.p, b.p));
      // a cursor page: the records past the cursor's position in the same order
      const rest = after ? keyed.filter((x) => order(x.p, after) > 0) : keyed;
      total = rest.length;
      const onPage = rest.slice(skip, skip + page.perPage);
      pageRecords = onPage.map((x) => x.r);
      memoryLast = onPage[onPage.length - 1]?.p;
    }
    hasNext = total > skip + page.perPage;
  }

  const lastPosition = (): Position | undefined => {
    if (memoryLast) return memoryLast;
    if (lastKey === undefined) return undefined;
    return plan.ordered && plan.position ? plan.position.of(lastKey) : { k: lastKey };
  };
  const position = hasNext ? lastPosition() : undefined;
  const nextCursor = position ? await sealCursor(binding, position) : null;

  return {
    records: pageRecords,
    pagy: {
      page: page.page,
      per_page: page.perPage,
      offset: page.offset,
      // a cursor page's place is its cursor: no page numbers around it
      next: hasNext && !after ? page.page + 1 : null,
      prev: page.page > 1 && !after ? page.page - 1 : null,
      ...(page.count ? { count: knownCount ?? total } : {}),
      next_cursor: nextCursor,
    },
    filters: echo,
    ...readModelParts(plan, page.count && knownCount !== undefined),
  };

  /**
   * What the page needs of a plan's keys: `filtering` when the caller's item filter applies (before the gate, a
   * filter still to be decided is taken as none: only the first Query's size depends on it).
   */
  function shape(p: ListPlan<R>, filtering: boolean) {
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

  /**
   * How a plan is read: its key stream (the first chunk started at once when small enough) and what the page needs
   * of it. A cursor page of a stream in list order reads from the cursor's key on (inclusive: that key is passed).
   */
  function open(p: ListPlan<R>, sizing: Sizing) {
    const s = shape(p, typeof run.itemFilter === 'function');
    const from = after && !s.memorySort ? (p.ordered && p.position ? p.position.key(after) : after.k) : undefined;
    const source = from !== undefined && 'partitions' in p.source ? { ...p.source, from } : p.source;
    const read = entryStream(run.ctx, run.loader, resource.entity, source, s.descending, s.firstChunk, s.wanted, sizing);
    const stream = from === undefined ? read : pastKey(read, from, s.descending);
    // the first chunk is read while the caller is, when it is small (a refused request reads no more than that)
    const early = s.firstChunk !== undefined && s.firstChunk <= EARLY_KEYS;
    return { entries: early ? started(stream) : stream };
  }
}

/** The generic plan: the first index-served eq/in filter in the resource's driver order, else the whole list. */
async function genericPlan<R extends BaseRecord>(
  resource: ListResource<R>,
  attributes: ReadonlyMap<string, AttrDef<R>>,
  filters: ParsedFilter[],
  env: IndexEnv,
): Promise<ListPlan<R>> {
  const order = resource.driverOrder ?? [...attributes.keys()];
  const driver = filters
    .filter((f) => (f.predicate === 'eq' || f.predicate === 'in') && attributes.get(f.attribute)!.index)
    .sort((a, b) => rank(order, a.attribute) - rank(order, b.attribute))[0];
  if (!driver)
    return {
      source: { partitions: resource.lists.map((l) => keys.entityList(env.ctx.tenantId, l)), firstRead: resource.listsFirstRead },
      served: [],
    };
  return {
    source: await attributes.get(driver.attribute)!.index!(driver.predicate === 'in' ? (driver.value as unknown[]) : [driver.value], env),
    served: [driver],
  };
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

const rank = (order: string[], a: string) => (order.indexOf(a) === -1 ? order.length : order.indexOf(a));

/** The entries of a stream after `key` in its direction (a cursor's key, and any the source yields before it). */
async function* pastKey(stream: AsyncGenerator<ListEntry>, key: string, descending: boolean): AsyncGenerator<ListEntry> {
  for await (const e of stream) if (descending ? e.sortKey < key : e.sortKey > key) yield e;
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

/** The answer's parts a read model decided: the plan's, and `count` when the counters gave it. */
function readModelParts<R>(plan: ListPlan<R>, counted: boolean): { readModel?: ReadModelPart[] } {
  const parts: ReadModelPart[] = [...(counted ? (['count'] as const) : []), ...(plan.readModel ?? [])];
  return parts.length ? { readModel: parts } : {};
}
