import { isAdmin, type Caller } from '#shared/auth/caller.ts';
import { nowIso } from '#shared/clock.ts';
import { committedUnlessConditionFails } from '#shared/db/conflict-retries.ts';
import { keys } from '#shared/db/keys.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getSide, querySideRange } from '#shared/db/side-items.ts';
import { TABLE_DEFINITION } from '#shared/db/table.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import {
  decodeCursor,
  END_OF_HOUR,
  FEED_RETENTION_SECONDS,
  feedSortKey,
  hourOf,
  type FeedPosition,
} from '#shared/domain/events/position.ts';
import { EVENT_TYPES, type EventType } from '#shared/domain/webhooks/entity.ts';
import type { IdentifiedEvent, OutboundEvent } from '#shared/domain/webhooks/events.ts';
import { BadRequestError, ConcurrentUpdateError, ForbiddenError } from '#shared/errors.ts';
import { parsePageParams } from '#shared/list/params.ts';
import type { TableChange } from '#shared/table-change.ts';

/*
 * The event feed (contract section 18): every outbound event the events projection makes, kept 30 days, read
 * oldest first from a position. Events are stored per tenant and hour of recording (keys.eventFeedHour), so
 * no partition takes all of a busy tenant's writes; a directory of the hours that hold events lets a reader
 * step over empty ones, and a pointer per event id answers `after=<id>`.
 *
 * Ordered by when they were recorded, not committed: a change whose projection ran late (a retried batch, a
 * slow shard) is recorded late and so still lands after the position a client has read to, where a commit-time
 * order would slip it in behind that client. Readers leave out the last SETTLE_MS, the time within which a
 * write given a recorded time has landed (a write that took longer is moved forward, `record`), and read the
 * hours strongly consistently, so a client that pages to the end and resumes later misses nothing. (Read
 * eventually consistently, a write landed within the read's lag stays hidden though its place is settled: a
 * slow write behind a fast one was skipped by a client resuming after the fast one.)
 */

/** Events recorded this recently are not served yet: their writes may still be landing (see above). */
export const FEED_SETTLE_MS = 2_000;
/** Hours read by one page at most: a sparse feed answers a short page with a cursor rather than many Queries. */
const MAX_HOURS_PER_PAGE = 6;
/** Items read by one page at most when `types` filters (the others are read and passed over). */
const MAX_SCANNED_PER_PAGE = 200;
const TTL = TABLE_DEFINITION.ttlAttribute;

const retentionEnd = (recordedAt: string) => Math.floor(Date.parse(recordedAt) / 1000) + FEED_RETENTION_SECONDS;

/** Hours whose directory entry this container has written (per tenant): one write per hour, not per event. */
const hoursWritten = new Set<string>();

/** The item version behind a change, doubled (+1 for a removal): orders an item's changes when the stream gives no sequence. */
const versionOrder = (change: TableChange) => {
  const v = Number((change.newImage ?? change.oldImage)?.v ?? 0);
  return String(2 * v + (change.eventName === 'REMOVE' ? 1 : 0));
};

/**
 * Writes one event at its recorded position: the position, or undefined when the pointer's condition failed (the
 * event is in the feed already: first write wins; or, moving, a concurrent replay moved it already).
 */
async function storeEvent(
  ctx: DataCtx,
  e: IdentifiedEvent,
  order: string,
  n: number,
  moving?: FeedPosition,
): Promise<FeedPosition | undefined> {
  const recordedAt = nowIso();
  const at: FeedPosition = { b: hourOf(recordedAt), k: feedSortKey(recordedAt, order, n) };
  const hourKey = `${ctx.tenantId} ${at.b}`;
  const pointer = keys.eventPointer(ctx.tenantId, e.id);
  const write = () => {
    const tx = new WriteTx(ctx).putSide(
      { PK: keys.eventFeedHour(ctx.tenantId, at.b), SK: at.k },
      { kind: 'event', id: e.id, type: e.event.type, body: JSON.stringify(e.event), [TTL]: retentionEnd(recordedAt) },
    );
    // a new event claims its id; a late one moves only from where it is (a concurrent replay may have moved it already)
    tx.putSide(
      pointer,
      { kind: 'event_pointer', hour: at.b, key: at.k, [TTL]: retentionEnd(recordedAt) },
      { if: moving ? { equals: { key: moving.k } } : { exists: false } },
    );
    if (moving) tx.deleteSide({ PK: keys.eventFeedHour(ctx.tenantId, moving.b), SK: moving.k });
    if (!hoursWritten.has(hourKey))
      tx.putSide(keys.eventFeedHourEntry(ctx.tenantId, at.b), { kind: 'event_hour', [TTL]: retentionEnd(recordedAt) + 3600 });
    return tx;
  };
  let committed: boolean;
  try {
    committed = await committedUnlessConditionFails(write);
  } catch (err) {
    // An answer lost after the write applied (a 500 once it took effect, the retries spent): the pointer says whether
    // it did. If so it is this write, landed only now perhaps, so it is moved past readers like any slow one below;
    // thrown, a replay of the change would find it in place and leave it behind readers that passed it.
    if ((await getSide(ctx, pointer))?.key !== at.k) throw err;
    committed = true;
  }
  if (!committed) return undefined;
  hoursWritten.add(hourKey);
  // Readers may have passed this position while the write was under way: move it past them (they see it once more, never not at all).
  if (Date.now() - Date.parse(recordedAt) >= FEED_SETTLE_MS) return storeEvent(ctx, e, order, n, at);
  return at;
}

/**
 * Writes a change's events to the feed, idempotently: the first write of an event id wins. Returns the events as
 * the feed holds them, so a replayed change publishes and delivers the payload the feed already has (a replay
 * may present a record differently if something it names changed meanwhile).
 */
export async function recordEvents(ctx: DataCtx, change: TableChange, events: IdentifiedEvent[]): Promise<IdentifiedEvent[]> {
  const order = change.sequence ?? versionOrder(change);
  const out: IdentifiedEvent[] = [];
  for (const [n, e] of events.entries()) {
    if (await storeEvent(ctx, e, order, n)) {
      out.push(e);
      continue;
    }
    const stored = await storedEvent(ctx, e.id);
    if (!stored) throw new ConcurrentUpdateError();
    out.push(stored);
  }
  return out;
}

/** The event the feed holds under `id` (strongly consistent), if any. */
async function storedEvent(ctx: DataCtx, id: string): Promise<IdentifiedEvent | undefined> {
  const at = await pointerOf(ctx, id);
  if (!at) return undefined;
  const item = await getSide(ctx, { PK: keys.eventFeedHour(ctx.tenantId, at.b), SK: at.k });
  return item ? { id, event: JSON.parse(item.body as string) as OutboundEvent } : undefined;
}

async function pointerOf(ctx: DataCtx, id: string): Promise<FeedPosition | undefined> {
  const p = await getSide(ctx, keys.eventPointer(ctx.tenantId, id));
  return p ? { b: p.hour as string, k: p.key as string } : undefined;
}

/** Admins only for now (contract section 18; service tokens with `events:read` come with service accounts). */
export function checkFeedReader(caller: Caller): void {
  if (!isAdmin(caller)) throw new ForbiddenError('Only admins read the event feed');
}

export interface FeedQuery {
  perPage: number;
  cursor?: string;
  after?: string;
  types?: Set<EventType>;
}

const KNOWN_TYPES = new Set<string>(EVENT_TYPES);
const EVENT_ID = /^evt_[0-9a-f]{32}$/;
const single = (pairs: Array<[string, string]>, name: string) => {
  const values = pairs.filter(([k]) => k === name).map(([, v]) => v);
  if (values.length > 1)
    throw new BadRequestError(`${name} is given more than once`, [{ field: name, code: 'invalid_value', message: 'give it once' }]);
  return values[0];
};

/** `per_page` (or `limit`), `cursor` or `after`, `types`; page numbers and offsets do not apply to a feed (400). */
export function parseFeedQuery(pairs: Array<[string, string]>): FeedQuery {
  for (const [k] of pairs)
    if (k === 'page' || k === 'offset' || k === 'count' || k.startsWith('q['))
      throw new BadRequestError(`${k} does not apply to the event feed`, [
        { field: k, code: 'unknown_parameter', message: 'the feed pages with cursor (pagy.next_cursor) or after=<event id>' },
      ]);
  // the list engine's page parameters take `cursor` too (contract 18); the feed's cursor is its own (position.ts)
  const { page, rest } = parsePageParams(pairs, ['after', 'types']);
  const cursor = page.cursor;
  const after = single(rest, 'after');
  if (cursor !== undefined && after !== undefined)
    throw new BadRequestError('Give cursor or after, not both', [
      { field: 'after', code: 'invalid_value', message: 'cursor already names a position' },
    ]);
  if (after !== undefined && !EVENT_ID.test(after))
    throw new BadRequestError('after must be an event id', [
      { field: 'after', code: 'invalid_value', message: 'an event id is evt_ and 32 hex digits' },
    ]);
  const named = rest.filter(([k]) => k === 'types').flatMap(([, v]) => v.split(','));
  let types: Set<EventType> | undefined;
  if (rest.some(([k]) => k === 'types')) {
    const unknown = named.filter((t) => !KNOWN_TYPES.has(t));
    if (unknown.length || named.length === 0)
      throw new BadRequestError(`types must name event types (${EVENT_TYPES.join(', ')})`, [
        { field: 'types', code: 'invalid_value', message: unknown.length ? `unknown: ${unknown.slice(0, 10).join(', ')}` : 'empty' },
      ]);
    types = new Set(named as EventType[]);
  }
  return {
    perPage: page.perPage,
    ...(cursor !== undefined ? { cursor } : {}),
    ...(after !== undefined ? { after } : {}),
    ...(types ? { types } : {}),
  };
}

/** An event as the feed answers it: the webhook body with its id. */
export type FeedEvent = { id: string } & OutboundEvent;

/**
 * One page of the caller's tenant's feed, oldest first, after the position `q` names (the start of the 30 days
 * when it names none). `next` is where the next page starts, absent when nothing recorded up to now is left.
 * A page reads at most MAX_HOURS_PER_PAGE hours and, filtered, MAX_SCANNED_PER_PAGE items: when it stops there
 * it may hold fewer than per_page events, and `next` goes on from where it stopped.
 */
export async function readFeed(ctx: DataCtx, q: FeedQuery): Promise<{ events: FeedEvent[]; next?: FeedPosition }> {
  const now = Date.now();
  const upTo = new Date(now - FEED_SETTLE_MS).toISOString();
  const oldest = new Date(now - FEED_RETENTION_SECONDS * 1000).toISOString();
  let from: FeedPosition = { b: hourOf(oldest), k: oldest };
  if (q.cursor !== undefined) from = decodeCursor(ctx.tenantId, q.cursor);
  else if (q.after !== undefined) {
    const at = await pointerOf(ctx, q.after);
    if (!at)
      throw new BadRequestError('after names no event of the feed', [
        { field: 'after', code: 'unknown_event', message: 'no event with this id in the last 30 days' },
      ]);
    from = at;
  }
  if (from.b < hourOf(oldest) || (from.b === hourOf(oldest) && from.k < oldest)) from = { b: hourOf(oldest), k: oldest };

  const hours = (
    await querySideRange(ctx, keys.eventFeedHours(ctx.tenantId), {
      from: from.b,
      to: hourOf(upTo),
      limit: MAX_HOURS_PER_PAGE + 1,
      consistent: true,
    })
  ).map((h) => h.SK);
  const events: FeedEvent[] = [];
  let scanned = 0;
  let last: FeedPosition | undefined; // the last item read
  for (const hour of hours.slice(0, MAX_HOURS_PER_PAGE)) {
    let after = hour === from.b ? from.k : undefined;
    for (;;) {
      const wanted = q.perPage + 1 - events.length;
      const limit = Math.min(MAX_SCANNED_PER_PAGE - scanned, q.types ? 4 * wanted : wanted);
      const items = await querySideRange(ctx, keys.eventFeedHour(ctx.tenantId, hour), {
        from: after ?? '0', // every sort key starts with a digit (an empty bound is not a key value)
        to: upTo,
        ...(after !== undefined ? { after } : {}),
        limit,
        consistent: true, // the settle time covers a write's landing, not an eventually consistent read's lag
      });
      for (const item of items) {
        scanned++;
        if (!q.types || q.types.has(item.type as EventType)) {
          // one more than the page: there is a next page, and it starts after the item read before this one
          if (events.length === q.perPage) return { events, next: last! };
          events.push({ id: item.id as string, ...(JSON.parse(item.body as string) as OutboundEvent) });
        }
        after = item.SK;
        last = { b: hour, k: item.SK };
      }
      if (scanned >= MAX_SCANNED_PER_PAGE && last) return { events, next: last };
      if (items.length < limit) break; // the hour is read to the end (up to now)
    }
  }
  if (hours.length > MAX_HOURS_PER_PAGE) return { events, next: { b: hours[MAX_HOURS_PER_PAGE - 1]!, k: END_OF_HOUR } };
  return { events };
}
