import { keys } from '#shared/db/keys.ts';
import { entryPartitionOf } from '#shared/db/index-queries.ts';
import type { BaseRecord, ListEntry } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { attributeMap, parseFilters, type ParsedFilter } from '#shared/list/filter.ts';
import { cursorBinding, openCursor, sealCursor, type Position } from '#shared/list/cursor.ts';
import type { Loader } from '#shared/list/entity-cache.ts';
import { pageShape } from '#shared/list/page-shape.ts';
import { readItemsPage, readKeysPage, readVerifiedPage, type PageInput } from '#shared/list/page-readers.ts';
import { listPage } from '#shared/list/list-page.ts';
import { parsePageParams } from '#shared/list/params.ts';
import type { AttrDef, IndexEnv, ListPlan, ListResource, ReadModelPart } from '#shared/list/resource.ts';
import { entriesFrom, started, type Sizing } from '#shared/list/streams.ts';

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
 * residual filter reads what it must (docs/architecture.md, "Filters"). What a resource declares is in
 * shared/list/resource.ts; how a page is shaped and cut from the keys, in shared/list/page-shape.ts and page-readers.ts.
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

/** The most keys a list reads before its gate opens (the caller known): what a refused request may have cost. */
export const EARLY_KEYS = 200;

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
  const shape = pageShape(plan, { filters, sort, page }, !!itemFilter);
  const { memorySort, needItems, verifying, speculative, skip, wanted } = shape;
  const { entries } = reading;
  const residual = filters.filter((f) => !plan.served.includes(f));
  let knownCount = page.count && !speculative ? await plan.count : undefined;
  // count=true without a counter: every matching key is walked (whole pages from here on)
  const walkAll = shape.walkAll || (page.count && !speculative && knownCount === undefined);
  if (walkAll) sizing.toEnd = true;
  const accepted = (e: ListEntry) => !run.entryFilter || run.entryFilter(e, filters);
  const input: PageInput<R> = {
    entries,
    accepted,
    load: (ids) => run.loader.many(resource.entity, ids, { listing: true }),
    plan,
    perPage: page.perPage,
    skip,
    wanted,
    walkAll,
  };
  const found = verifying
    ? await readVerifiedPage(input)
    : !needItems
      ? await readKeysPage(input, sizing, speculative)
      : await readItemsPage(input, { itemFilter, residual, attributes, loader: run.loader, memorySort, after });
  if (speculative) knownCount = found.counted;
  const { records: pageRecords, total, hasNext, lastKey, memoryLast } = found;

  const lastPosition = (): Position | undefined => {
    if (memoryLast) return memoryLast;
    if (lastKey === undefined) return undefined;
    return plan.ordered && plan.position ? plan.position.of(lastKey) : { k: lastKey };
  };
  const position = hasNext ? lastPosition() : undefined;
  const nextCursor = position ? await sealCursor(binding, position) : null;

  return {
    ...listPage(page, { records: pageRecords, hasNext, fromCursor: !!after, count: knownCount ?? total, nextCursor }, echo),
    ...readModelParts(plan, page.count && knownCount !== undefined),
  };

  /**
   * How a plan is read: its key stream (the first chunk started at once when small enough) and what the page needs
   * of it. A cursor page of a stream in list order reads from the cursor's key on (inclusive: that key is passed).
   */
  function open(p: ListPlan<R>, sizing: Sizing) {
    const s = pageShape(p, { filters, sort, page }, typeof run.itemFilter === 'function');
    const from = after && !s.memorySort ? (p.ordered && p.position ? p.position.key(after) : after.k) : undefined;
    const stream = entriesFrom(run.ctx, run.loader, resource.entity, p.source, s, sizing, from);
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

const rank = (order: string[], a: string) => (order.indexOf(a) === -1 ? order.length : order.indexOf(a));

/** The answer's parts a read model decided: the plan's, and `count` when the counters gave it. */
function readModelParts<R>(plan: ListPlan<R>, counted: boolean): { readModel?: ReadModelPart[] } {
  const parts: ReadModelPart[] = [...(counted ? (['count'] as const) : []), ...(plan.readModel ?? [])];
  return parts.length ? { readModel: parts } : {};
}
