import { keys } from '#shared/db/keys.ts';
import { queryList } from '#shared/db/index-queries.ts';
import type { BaseRecord, EntityDef, ListEntry } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities } from '#shared/db/reads.ts';
import type { Loader } from '#shared/list/entity-cache.ts';

/**
 * The list engine's key streams: index entries (id, sort key, envelope) in list order, read lazily so a page
 * reads about what it needs.
 */

/**
 * Where the keys come from: GSI1 partitions (merged), entries found otherwise, or records by id. `firstRead`: the
 * keys each merged partition reads at least in its first Query (bounded by what the page wants), for a list
 * sharded many ways (see entryStream).
 */
export type IndexSource = { partitions: string[]; from?: string; firstRead?: number } | { entries: ListEntry[] } | { ids: string[] };

/** How a stream sizes its Queries. The engine sets `toEnd` when it must read every key (a count walked): no Limit from then on. */
export interface Sizing {
  toEnd: boolean;
}

/**
 * One GSI1 partition read lazily in sort order (`from`: the first sort key, inclusive), page by page. The first
 * Query asks for `firstChunk` keys; when DynamoDB cuts it short at 1 MB the next asks for the rest of it; later
 * ones (filtered-out entries, or a merge reading on) start small and double up to 1,000; once `sizing.toEnd`,
 * whole 1 MB pages. `owed` (a merged partition): how many keys the merge still owes its reader when this
 * partition runs dry; a follow-up asks for no more than that, since no more of them can come from here.
 */
async function* partitionStream(
  ctx: DataCtx,
  partition: string,
  descending: boolean,
  firstChunk: number | undefined,
  sizing: Sizing,
  from?: string,
  owed?: () => number,
): AsyncGenerator<ListEntry> {
  let startKey: Record<string, unknown> | undefined;
  let limit = firstChunk;
  let step = firstChunk; // the growing follow-up size, kept apart from `limit` so an `owed` cap does not restart the doubling
  let first = true;
  do {
    const page = await queryList(ctx, partition, {
      forward: !descending,
      startKey,
      limit: sizing.toEnd ? undefined : limit,
      ...(from ? { from } : {}),
    });
    yield* page.entries;
    startKey = page.lastKey;
    // reached only when the reader asks past this page: `owed` is read at the moment the next key is needed
    if (limit && step) {
      const short = limit - page.entries.length; // > 0: the 1 MB cut, not the Limit, ended this page
      step = short > 0 ? short : first ? Math.min(50, Math.max(10, step)) : Math.min(step * 2, 1000);
      const left = short > 0 ? 0 : (owed?.() ?? 0);
      limit = left > 0 ? Math.min(left, step) : step;
    }
    first = false;
  } while (startKey);
}

/**
 * A k-way merge of sorted partitions (sharded lists, `in` filters over several entry lists), reading each
 * partition only as far as the merged order needs. An id listed in several partitions (a goal owned by two of
 * the users of an `in` filter) has the same sort key in each, so it is yielded once. The partition an entry was
 * taken from is read on only when the next entry is asked for, so a reader that stops reads nothing more.
 * `wanted`: the entries the reader expects to take; what is left of it bounds a partition's follow-up Query.
 */
function mergeStreams(
  open: (owed: () => number) => AsyncGenerator<ListEntry>[],
  descending: boolean,
  wanted: number,
): AsyncGenerator<ListEntry> {
  let yielded = 0;
  const streams = open(() => wanted - yielded);
  return (async function* () {
    const heads = await Promise.all(streams.map(async (s) => ({ s, e: (await s.next()).value as ListEntry | undefined })));
    const before = (a: ListEntry, b: ListEntry) => (descending ? a.sortKey > b.sortKey : a.sortKey < b.sortKey);
    let lastKey: string | undefined;
    const lastIds = new Set<string>();
    let taken: (typeof heads)[number] | undefined;
    for (;;) {
      if (taken) taken.e = (await taken.s.next()).value as ListEntry | undefined;
      let best: (typeof heads)[number] | undefined;
      for (const h of heads) if (h.e && (!best || before(h.e, best.e!))) best = h;
      if (!best) return;
      const e = best.e!;
      taken = best;
      if (e.sortKey !== lastKey) {
        lastKey = e.sortKey;
        lastIds.clear();
      }
      if (lastIds.has(e.id)) continue;
      lastIds.add(e.id);
      yielded++;
      yield e;
    }
  })();
}

/**
 * The source's entries in list order. `firstChunk` bounds the first Query of a partition source, `wanted` the
 * keys a page needs of them: merged partitions each read their share of `wanted` and one more first (at least
 * the source's `firstRead`), then at most what the merge still owes (see partitionStream).
 */
export async function* entryStream<R extends BaseRecord>(
  ctx: DataCtx,
  loader: Loader,
  entity: EntityDef<R>,
  source: IndexSource,
  descending: boolean,
  firstChunk: number | undefined,
  wanted: number,
  sizing: Sizing,
): AsyncGenerator<ListEntry> {
  if ('partitions' in source) {
    const { partitions, from } = source;
    if (partitions.length === 1) {
      yield* partitionStream(ctx, partitions[0]!, descending, firstChunk, sizing, from);
      return;
    }
    // each reads on when the merge needs more
    const perPartition =
      firstChunk === undefined
        ? undefined
        : Math.max(Math.ceil(wanted / partitions.length) + 1, Math.min(source.firstRead ?? 0, firstChunk));
    yield* mergeStreams(
      (owed) => partitions.map((p) => partitionStream(ctx, p, descending, perPartition, sizing, from, owed)),
      descending,
      wanted,
    );
    return;
  }
  let collected: ListEntry[];
  if ('entries' in source) {
    collected = source.entries;
  } else {
    const found = await getEntities(ctx, entity, source.ids, false); // a list's records: may lag as the list does
    collected = [];
    for (const s of found.values()) {
      loader.prime(entity, s.record);
      collected.push({
        id: s.record.uuid,
        sortKey: keys.listSortKey(s.record.created_at, s.record.uuid),
        ...(entity.envelope?.(s.record) ?? {}),
      });
    }
  }
  const seen = new Set<string>();
  const unique = collected.filter((e) => !seen.has(e.id) && seen.add(e.id));
  unique.sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0) * (descending ? -1 : 1));
  yield* unique;
}

/**
 * A stream whose first read starts now (its first Query in flight while the caller waits on something else, e.g.
 * the caller's own read), handing its entries on in order when asked.
 */
export function started<T>(stream: AsyncGenerator<T>): AsyncGenerator<T> {
  const first = stream.next();
  first.catch(() => undefined); // awaited below, unless the list is dropped (a refused caller)
  return (async function* () {
    const r = await first;
    if (r.done) return;
    yield r.value;
    yield* stream;
  })();
}

/** The entries of a stream after `key` in its direction (a cursor's key, and any the source yields before it). */
async function* pastKey(stream: AsyncGenerator<ListEntry>, key: string, descending: boolean): AsyncGenerator<ListEntry> {
  for await (const e of stream) if (descending ? e.sortKey < key : e.sortKey > key) yield e;
}

/**
 * A page's key stream: the source's entries in list order, after `from` when a cursor page reads a stream in list
 * order. A partition source then reads from that key on, inclusive: the cursor's own key comes first and is
 * passed, so it is one more key to read (first chunk and wanted), or a merged shard's follow-up Query would ask
 * for one key too few and need a second one.
 */
export function entriesFrom<R extends BaseRecord>(
  ctx: DataCtx,
  loader: Loader,
  entity: EntityDef<R>,
  source: IndexSource,
  { descending, firstChunk, wanted }: { descending: boolean; firstChunk: number | undefined; wanted: number },
  sizing: Sizing,
  from?: string,
): AsyncGenerator<ListEntry> {
  if (from === undefined) return entryStream(ctx, loader, entity, source, descending, firstChunk, wanted, sizing);
  const extra = 'partitions' in source ? 1 : 0;
  const read = entryStream(
    ctx,
    loader,
    entity,
    'partitions' in source ? { ...source, from } : source,
    descending,
    firstChunk === undefined ? undefined : firstChunk + extra,
    wanted + extra,
    sizing,
  );
  return pastKey(read, from, descending);
}
