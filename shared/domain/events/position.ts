import { createHash } from 'node:crypto';
import { BadRequestError } from '#shared/errors.ts';

/*
 * Positions in the event feed (pure). An event's position is its hour partition and its sort key there:
 * `<recorded at, ISO 8601 ms>#<stream sequence, 40 digits>#<n>`. Recorded at is when the events projection wrote
 * it: the changes of one item reach the projection one after the other in commit order (the processor keeps
 * an item's order), so the recorded times of one record's events follow its commits; two changes of one item
 * within one millisecond are told apart by the stream's sequence number, and the events of one change by n.
 */

export const FEED_RETENTION_SECONDS = 30 * 86_400;

/** A place in the feed: events after it (exclusive) come next. `k` is an event's sort key, `END` (after every key of the hour) or an ISO time (before the events recorded from then on). */
export interface FeedPosition {
  /** The hour partition, `YYYY-MM-DDTHH`. */
  b: string;
  k: string;
}

/** Sorts after every sort key of an hour: the position at the end of an hour. */
export const END_OF_HOUR = '~';

export const hourOf = (iso: string) => iso.slice(0, 13);

/** The sort key of the `n`th event of a change recorded at `recordedAt`; `order` is the stream sequence (or the item version). */
export const feedSortKey = (recordedAt: string, order: string, n: number) => `${recordedAt}#${order.padStart(40, '0')}#${n}`;

const HOUR = /^\d{4}-\d\d-\d\dT\d\d$/;
const KEY = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z(#\d{40}#\d+)?$/;

/**
 * The cursor of a position: the position and a check digest bound to the tenant. It is opaque to clients;
 * the digest makes a cursor altered or made for another tenant a 400 instead of a position. (It need not be
 * a secret: whatever position a cursor names, the feed reads only the caller's tenant's partitions.)
 */
export function encodeCursor(tenantId: string, p: FeedPosition): string {
  const payload = Buffer.from(JSON.stringify([p.b, p.k])).toString('base64url');
  return `${payload}.${digest(tenantId, payload)}`;
}

const digest = (tenantId: string, payload: string) =>
  createHash('sha256').update(`event-feed-cursor/v1\n${tenantId}\n${payload}`).digest('base64url').slice(0, 22);

const badCursor = () =>
  new BadRequestError('cursor is not a cursor of this feed', [
    { field: 'cursor', code: 'invalid_cursor', message: 'pass pagy.next_cursor of a previous page of GET /events, unchanged' },
  ]);

/** The position a cursor names; 400 for anything but a cursor this feed gave the caller's tenant. */
export function decodeCursor(tenantId: string, cursor: string): FeedPosition {
  const dot = cursor.indexOf('.');
  if (dot <= 0 || cursor.length > 512) throw badCursor();
  const payload = cursor.slice(0, dot);
  if (cursor.slice(dot + 1) !== digest(tenantId, payload)) throw badCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw badCursor();
  const [b, k] = parsed as unknown[];
  if (typeof b !== 'string' || typeof k !== 'string' || !HOUR.test(b) || (k !== END_OF_HOUR && !KEY.test(k))) throw badCursor();
  return { b, k };
}
