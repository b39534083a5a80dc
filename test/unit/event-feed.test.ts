import { describe, expect, it } from 'vitest';
import { parseFeedQuery } from '#shared/domain/events/feed.ts';
import { decodeCursor, encodeCursor, END_OF_HOUR, feedSortKey, hourOf } from '#shared/domain/events/position.ts';
import { tableChange } from '#shared/stream/changes.ts';
import { BadRequestError } from '#shared/errors.ts';

const T = '11111111-1111-4111-8111-111111111111';
const U = '22222222-2222-4222-8222-222222222222';
const at = '2026-03-01T10:15:30.123Z';

const refused = (fn: () => unknown, field: string) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).details[0]?.field).toBe(field);
    return;
  }
  throw new Error(`not refused: ${field}`);
};

describe('event feed positions and cursors', () => {
  it('orders one millisecond by stream sequence numbers of any length, then by the event within the change', () => {
    const keys = [
      feedSortKey(at, '10', 0),
      feedSortKey(at, '9', 1),
      feedSortKey(at, '9', 0),
      feedSortKey('2026-03-01T10:15:30.122Z', '99', 0),
    ];
    expect([...keys].sort()).toEqual([keys[3], keys[2], keys[1], keys[0]]);
    expect(hourOf(at)).toBe('2026-03-01T10');
    expect(END_OF_HOUR > feedSortKey('2026-03-01T10:59:59.999Z', '9'.repeat(40), 9)).toBe(true);
  });

  it('gives the position back from its cursor, to its tenant only', () => {
    const p = { b: hourOf(at), k: feedSortKey(at, '123', 0) };
    const cursor = encodeCursor(T, p);
    expect(decodeCursor(T, cursor)).toEqual(p);
    expect(decodeCursor(T, encodeCursor(T, { b: p.b, k: END_OF_HOUR }))).toEqual({ b: p.b, k: END_OF_HOUR });
    refused(() => decodeCursor(U, cursor), 'cursor');
  });

  it('refuses an altered, truncated or made-up cursor', () => {
    const cursor = encodeCursor(T, { b: hourOf(at), k: feedSortKey(at, '123', 0) });
    const [payload, check] = cursor.split('.') as [string, string];
    const other = Buffer.from(JSON.stringify(['2020-01-01T00', END_OF_HOUR])).toString('base64url');
    for (const bad of [`${other}.${check}`, `${payload}A.${check}`, `${payload}.${check}A`, payload, `.${check}`, '', 'x'.repeat(600)])
      refused(() => decodeCursor(T, bad), 'cursor');
    // well signed but not a position: still a 400, not a Query with a strange key
    const notAPosition = (value: unknown) => {
      const raw = Buffer.from(JSON.stringify(value)).toString('base64url');
      const signed = encodeCursor(T, { b: 'x', k: 'y' }).split('.')[1];
      return `${raw}.${signed}`;
    };
    refused(() => decodeCursor(T, notAPosition(['2026-03-01T10', 'T#other#goal'])), 'cursor');
    refused(() => decodeCursor(T, encodeCursor(T, { b: '2026-03-01T10', k: 'T#other#goal' })), 'cursor');
    refused(() => decodeCursor(T, encodeCursor(T, { b: 'T#x', k: END_OF_HOUR })), 'cursor');
  });
});

describe('GET /events parameters', () => {
  it('takes per_page, cursor or after, and types', () => {
    expect(parseFeedQuery([])).toEqual({ perPage: 20 });
    const q = parseFeedQuery([
      ['per_page', '500'],
      ['after', `evt_${'a'.repeat(32)}`],
      ['types', 'goal.created,checkin.deleted'],
    ]);
    expect(q).toEqual({ perPage: 100, after: `evt_${'a'.repeat(32)}`, types: new Set(['goal.created', 'checkin.deleted']) });
  });

  it('refuses unknown or empty types, cursor with after, a malformed event id, page numbers and filters', () => {
    refused(() => parseFeedQuery([['types', 'goal.created,goal.exploded']]), 'types');
    refused(() => parseFeedQuery([['types', '']]), 'types');
    refused(() => parseFeedQuery([['types', '__proto__']]), 'types');
    refused(
      () =>
        parseFeedQuery([
          ['cursor', 'c'],
          ['after', `evt_${'a'.repeat(32)}`],
        ]),
      'after',
    );
    refused(() => parseFeedQuery([['after', 'evt_123']]), 'after');
    refused(
      () =>
        parseFeedQuery([
          ['cursor', 'a'],
          ['cursor', 'b'],
        ]),
      'cursor',
    );
    for (const k of ['page', 'offset', 'count', 'q[type_eq]', 'sort']) refused(() => parseFeedQuery([[k, '1']]), k);
  });
});

describe('the stream record of a change', () => {
  it('carries its sequence number, which orders the changes of one item', () => {
    const change = tableChange({
      eventID: 'e1',
      eventName: 'MODIFY',
      dynamodb: {
        ApproximateCreationDateTime: 1_770_000_000,
        SequenceNumber: '4200000000000012345',
        Keys: { PK: { S: `T#${T}#goal#${U}` }, SK: { S: '#' } },
      },
    });
    expect(change?.sequence).toBe('4200000000000012345');
  });
});
