import { keys } from '#shared/db/keys.ts';
import type { EntryList } from '#shared/db/entry-lists.ts';
import { entryPartitionOf } from '#shared/db/index-queries.ts';
import type { BaseRecord, DataCtx, EntityDef, ListEntry } from '#shared/db/model.ts';
import { attributeMap, matchValue, parseFilters, type AttrType, type ParsedFilter, type ParsedSort } from '#shared/list/filter.ts';
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
  /** In a desc sort held in memory, ties come in reverse creation order (desc is asc reversed), as the read model serving this sort orders them. */
  descReversesTies?: boolean;
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
  /** The source yields records in the order `q[s]` asks (no in-memory sort), `descending` when read backwards. */
  ordered?: boolean;
  descending?: boolean;
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
  pagy: { page: number; per_page: number; offset: number; next: number | null; prev: number | null; count?: number };
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

  let total = 0;
  let pageRecords: R[] = [];
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
      }
      pageRecords.push(...(await run.loader.many(resource.entity, ids)).filter((r) => plan.verify!(r)));
    }
    hasNext = !exhausted && (await nextAccepted()) !== undefined;
  } else if (!needItems) {
    const pageIds: string[] = [];
    let pageRead: Promise<R[]> | undefined;
    // the loader keeps id order and skips vanished items; awaited below, unless the count's walk fails first
    const readPage = () => {
      if (!pageRead) (pageRead = run.loader.many(resource.entity, pageIds)).catch(() => undefined);
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
      if (total >= skip && total < skip + page.perPage) pageIds.push(r.value.id);
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
      const records = (await Promise.all(chunks.map((ids) => run.loader.many(resource.entity, ids)))).flat();
      batch = [];
      const keep = itemFilter ? await itemFilter(records) : undefined;
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
      // `matched` is in creation order and the sort is stable, so ties keep creation order in both directions,
      // unless desc is asc reversed for this attribute (ties newest first, as its read model orders them)
      const desc = memorySort.direction === 'desc';
      const reverse = desc && !!attr.descReversesTies;
      keyed.sort((a, b) => compare(a.k, b.k) * (desc && !reverse ? -1 : 1));
      if (reverse) keyed.reverse();
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
    ...readModelParts(plan, page.count && knownCount !== undefined),
  };

  /**
   * What the page needs of a plan's keys: `filtering` when the caller's item filter applies (before the gate, a
   * filter still to be decided is taken as none: only the first Query's size depends on it).
   */
  function shape(p: ListPlan<R>, filtering: boolean) {
    const residuals = filters.some((f) => !p.served.includes(f));
    const descending = p.ordered ? !!p.descending : sort?.attribute === 'created_at' && sort.direction === 'desc';
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

  /** How a plan is read: its key stream (the first chunk started at once when small enough) and what the page needs of it. */
  function open(p: ListPlan<R>, sizing: Sizing) {
    const s = shape(p, typeof run.itemFilter === 'function');
    const stream = entryStream(run.ctx, run.loader, resource.entity, p.source, s.descending, s.firstChunk, s.wanted, sizing);
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
  if (!driver) return { source: { partitions: resource.lists.map((l) => keys.entityList(env.ctx.tenantId, l)) }, served: [] };
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

function compare(a: unknown, b: unknown): number {
  const na = a === null || a === undefined;
  const nb = b === null || b === undefined;
  if (na || nb) return na === nb ? 0 : na ? 1 : -1; // nulls last
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b));
}

/** The answer's parts a read model decided: the plan's, and `count` when the counters gave it. */
function readModelParts<R>(plan: ListPlan<R>, counted: boolean): { readModel?: ReadModelPart[] } {
  const parts: ReadModelPart[] = [...(counted ? (['count'] as const) : []), ...(plan.readModel ?? [])];
  return parts.length ? { readModel: parts } : {};
}
