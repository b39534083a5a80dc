import type { EntryList } from '#shared/db/entry-lists.ts';
import type { BaseRecord, EntityDef } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import type { AttrType, ParsedFilter, ParsedSort } from '#shared/list/filter.ts';
import type { Position } from '#shared/list/cursor.ts';
import type { Loader } from '#shared/list/entity-cache.ts';
import type { PageParams } from '#shared/list/params.ts';
import type { IndexSource } from '#shared/list/streams.ts';

/**
 * What a list resource declares to the list engine (shared/list/engine.ts): its attributes and the indexes that
 * serve them, and the plan it may make from its read models.
 */

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

/** A part of a list's answer that a read model kept by the change stream decided (ListPlan.readModel). */
export type ReadModelPart = 'count' | 'filter' | 'order' | 'position';
