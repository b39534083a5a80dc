import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { awsFaithfulLayer } from '../../scripts/lib/aws-faithful.ts';
import { config } from '#shared/config.ts';
import { baseDb, createDynamoClient, instrument, type Db } from '#shared/db/client.ts';
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

  it('moves a write that applied late though its answer was an error (a 500 once it took effect, retries spent), so none misses it', async () => {
    let failed = false;
    const base = baseDb();
    const lost = {
      send: async (command: TransactWriteCommand) => {
        const out = await base.send(command);
        if (failed) return out;
        failed = true;
        at(Date.now() + FEED_SETTLE_MS + 500);
        throw Object.assign(new Error('Internal server error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
      },
    } as Db;
    const c = ctx(lost);
    expect(await recordEvents(c, change('1'), [event('1')])).toEqual([event('1')]);
    const pointer = await getSide(c, keys.eventPointer(c.tenantId, event('1').id));
    expect(pointer?.key).toMatch(new RegExp(`^${new Date(T0 + FEED_SETTLE_MS + 500).toISOString()}#`));
    const hour = await querySide(c, keys.eventFeedHour(c.tenantId, hourOf(new Date(T0).toISOString())));
    expect(hour.map((i) => i.SK)).toEqual([pointer!.key]);
    // an error before anything applied is the error
    const refused = { send: async () => Promise.reject(Object.assign(new Error('Throttled'), { name: 'ThrottlingException' })) } as Db;
    await expect(recordEvents(ctx(refused), change('2'), [event('2')])).rejects.toThrow('Throttled');
  });

  it('serves a settled event whose write landed within the lag of an eventually consistent read: a client resuming after a later event misses none', async () => {
    // AWS may answer an eventually consistent read as of up to about a second ago (the AWS-faithful mode: always 1 s)
    const client = createDynamoClient();
    awsFaithfulLayer({ staleMs: 1_000, faultRate: 0, endpoint: config.dynamoEndpoint!, now: () => Date.now() })(client);
    const stale = instrument(client);
    const c = ctx(stale);
    // A is recorded first and its write lands 1.5 s later (retried under throttling: within the settle time, so not
    // moved); B, recorded after A, lands at once
    let landA!: () => void;
    const gate = new Promise<void>((resolve) => {
      landA = resolve;
    });
    const slow = {
      send: async (command: TransactWriteCommand) => {
        await gate;
        return stale.send(command);
      },
    } as Db;
    const a = recordEvents({ ...c, db: slow }, change('1'), [event('1')]);
    at(T0 + 10);
    await recordEvents(c, change('2'), [event('2')]);
    at(T0 + 1_500);
    landA();
    await a;
    expect(await getSide(c, keys.eventPointer(c.tenantId, event('1').id))).toMatchObject({
      key: expect.stringMatching(/^2026-05-04T10:20:00.000Z#/),
    });
    // both places are settled 2 s after B was recorded, A's write 0.5 s old: a read then serves both, in their order
    at(T0 + 10 + FEED_SETTLE_MS + 1);
    const read = await readFeed(c, { perPage: 10 });
    expect(ids(read.events)).toEqual(['1', '2']);
    expect(read.next).toBeUndefined();
    // so a client that read to B and resumes after it has everything
    at(T0 + 60_000);
    expect((await readFeed(c, { perPage: 10, after: event('2').id })).events).toEqual([]);
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
