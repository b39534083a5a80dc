import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { baseDb, type Db } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getSide, querySide } from '#shared/db/side-items.ts';
import { FEED_SETTLE_MS, readFeed, recordEvents } from '#shared/domain/events/feed.ts';
import { decodeCursor, encodeCursor, FEED_RETENTION_SECONDS, hourOf } from '#shared/domain/events/position.ts';
import type { IdentifiedEvent } from '#shared/domain/webhooks/events.ts';
import type { TableChange } from '#shared/table-change.ts';

/** The feed's store side against DynamoDB Local, with the clock in the test's hands (Date only: the SDK's timers run). */
const T0 = Date.parse('2026-05-04T10:20:00.000Z');
const ctx = (db: Db = baseDb()): DataCtx => ({ tenantId: randomUUID(), db });
const change = (sequence: string): TableChange => ({
  eventId: randomUUID(),
  eventName: 'MODIFY',
  at: new Date().toISOString(),
  tenantId: 'unused',
  keys: { PK: 'T#x#goal#g', SK: '#' },
  sequence,
});
const event = (id: string, title = 'A'): IdentifiedEvent => ({
  id: `evt_${id.padStart(32, '0')}`,
  event: { type: 'goal.updated', timestamp: '2026-05-04T10:19:59.000Z', data: { tenant_uuid: 't', record: { uuid: 'g', title } } },
});
const ids = (events: Array<{ id: string }>) => events.map((e) => e.id.replace(/^evt_0*/, ''));
const at = (ms: number) => vi.setSystemTime(ms);
/** The clock past the settle time of everything recorded so far (an event is served once older than FEED_SETTLE_MS). */
const settled = () => at(Date.now() + FEED_SETTLE_MS + 1);

describe('the event feed in the table', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    at(T0);
  });
  afterEach(() => vi.useRealTimers());

  it('keeps the first write of an event id: a replay gets the stored payload back and adds nothing', async () => {
    const c = ctx();
    expect(await recordEvents(c, change('5'), [event('1', 'first')])).toEqual([event('1', 'first')]);
    at(T0 + 60_000);
    const replayed = await recordEvents(c, change('5'), [event('1', 'presented again')]);
    expect(replayed.map((e) => e.event.data.record.title)).toEqual(['first']);
    settled();
    const { events, next } = await readFeed(c, { perPage: 10 });
    expect(events).toEqual([{ id: event('1').id, ...event('1', 'first').event }]);
    expect(next).toBeUndefined();
    const stored = await querySide(c, keys.eventFeedHour(c.tenantId, hourOf(new Date(T0).toISOString())));
    expect(stored).toHaveLength(1);
    expect(stored[0]!.expires_at).toBe(T0 / 1000 + FEED_RETENTION_SECONDS);
  });

  it('orders changes of one item within one millisecond by stream sequence, the events of a change in their order', async () => {
    const c = ctx();
    await recordEvents(c, change('9'), [event('1'), event('2')]);
    await recordEvents(c, change('10'), [event('3')]);
    settled();
    expect(ids((await readFeed(c, { perPage: 10 })).events)).toEqual(['1', '2', '3']);
  });

  it('serves an event once it has settled, and never one older than 30 days', async () => {
    const c = ctx();
    at(T0 - FEED_RETENTION_SECONDS * 1000 - 1000);
    await recordEvents(c, change('1'), [event('1')]);
    at(T0);
    await recordEvents(c, change('2'), [event('2')]);
    at(T0 + FEED_SETTLE_MS);
    expect((await readFeed(c, { perPage: 10 })).events).toEqual([]);
    at(T0 + FEED_SETTLE_MS + 1);
    expect(ids((await readFeed(c, { perPage: 10 })).events)).toEqual(['2']);
  });

  it('moves a write that landed after readers may have passed its place, so none misses it', async () => {
    let delayed = false;
    const base = baseDb();
    const slow = {
      send: async (command: unknown) => {
        const out = await base.send(command as TransactWriteCommand);
        // the first write lands late: the clock has moved past the settle time meanwhile
        if (command instanceof TransactWriteCommand && !delayed) {
          delayed = true;
          at(Date.now() + FEED_SETTLE_MS + 500);
        }
        return out;
      },
    } as Db;
    const c = ctx(slow);
    await recordEvents(c, change('1'), [event('1')]);
    const pointer = await getSide(c, keys.eventPointer(c.tenantId, event('1').id));
    expect(pointer?.key).toMatch(new RegExp(`^${new Date(T0 + FEED_SETTLE_MS + 500).toISOString()}#`));
    const hour = await querySide(c, keys.eventFeedHour(c.tenantId, hourOf(new Date(T0).toISOString())));
    expect(hour.map((i) => i.SK)).toEqual([pointer!.key]);
  });

  it('reads at most six hours a page and goes on from there by cursor, across days', async () => {
    const c = ctx();
    const hours = [0, 1, 2, 5, 9, 30, 31, 50];
    for (const [i, h] of hours.entries()) {
      at(T0 + h * 3_600_000);
      await recordEvents(c, change(String(i)), [event(String(i + 1))]);
    }
    settled();
    const first = await readFeed(c, { perPage: 100 });
    expect(ids(first.events)).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(first.next).toBeDefined();
    const cursor = encodeCursor(c.tenantId, first.next!);
    const second = await readFeed(c, { perPage: 100, cursor });
    expect(ids(second.events)).toEqual(['7', '8']);
    expect(second.next).toBeUndefined();
    // per page, and after an event id
    const small = await readFeed(c, { perPage: 3 });
    expect(ids(small.events)).toEqual(['1', '2', '3']);
    expect(ids((await readFeed(c, { perPage: 3, cursor: encodeCursor(c.tenantId, small.next!) })).events)).toEqual(['4', '5', '6']);
    expect(ids((await readFeed(c, { perPage: 100, after: event('7').id })).events)).toEqual(['8']);
    expect(decodeCursor(c.tenantId, cursor)).toEqual(first.next);
  });

  it('filters by type, reading past others', async () => {
    const c = ctx();
    const created = (id: string): IdentifiedEvent => ({ ...event(id), event: { ...event(id).event, type: 'goal.created' } });
    await recordEvents(c, change('1'), [event('1'), created('2'), event('3'), created('4')]);
    settled();
    const page = await readFeed(c, { perPage: 1, types: new Set(['goal.created']) });
    expect(ids(page.events)).toEqual(['2']);
    const rest = await readFeed(c, { perPage: 10, types: new Set(['goal.created']), cursor: encodeCursor(c.tenantId, page.next!) });
    expect(ids(rest.events)).toEqual(['4']);
    expect(rest.next).toBeUndefined();
  });
});
