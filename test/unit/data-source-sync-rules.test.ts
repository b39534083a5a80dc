import { describe, expect, it } from 'vitest';
import type { DataSourceRecord } from '#shared/domain/integrations/entity.ts';
import {
  atPointer,
  httpJsonSettings,
  isJsonPointer,
  nextRunAt,
  numberAt,
  sourceAfterSync,
} from '#shared/domain/integrations/sync-rules.ts';
import { parseDueSortKey, dueSortKey } from '#shared/domain/integrations/sync-due.ts';

const NOW = '2026-01-01T00:00:00.000Z';
const source = (over: Partial<DataSourceRecord> = {}): DataSourceRecord => ({
  uuid: 'ds',
  goal_uuid: 'g',
  name: 'n',
  kind: 'http_json',
  config: { url: 'https://x.test/v', json_pointer: '/a', every_minutes: 30 },
  creator_uuid: 'u',
  status: 'active',
  failures: 0,
  created_at: NOW,
  updated_at: NOW,
  ...over,
});

describe('data-source sync rules', () => {
  it('reads RFC 6901 pointers: escapes, arrays, own properties only', () => {
    const doc = { 'a/b': { 'm~n': [10, { v: 2 }] }, '': 1 };
    expect(atPointer(doc, '/a~1b/m~0n/1/v')).toEqual({ found: true, value: 2 });
    expect(atPointer(doc, '/a~1b/m~0n/0')).toEqual({ found: true, value: 10 });
    expect(atPointer(doc, '/')).toEqual({ found: true, value: 1 });
    expect(atPointer(doc, '')).toEqual({ found: true, value: doc });
    expect(atPointer(doc, '/a~1b/m~0n/2')).toEqual({ found: false });
    expect(atPointer(doc, '/a~1b/m~0n/01')).toEqual({ found: false });
    expect(atPointer({}, '/constructor')).toEqual({ found: false });
    expect([isJsonPointer(''), isJsonPointer('/a~0'), isJsonPointer('a'), isJsonPointer('/a~2')]).toEqual([true, true, false, false]);
  });

  it('takes a number (or a numeric string) at the pointer, else says why not', () => {
    expect(numberAt('{"a":42.5}', '/a')).toEqual({ value: 42.5 });
    expect(numberAt('{"a":"17"}', '/a')).toEqual({ value: 17 });
    expect(numberAt('{"a":"x"}', '/a')).toEqual({ error: 'the value at json_pointer /a is not a number' });
    expect(numberAt('{"a":null}', '/a')).toEqual({ error: 'the value at json_pointer /a is not a number' });
    expect(numberAt('{"b":1}', '/a')).toEqual({ error: 'nothing at json_pointer /a' });
    expect(numberAt('<html>', '/a')).toEqual({ error: 'the answer is not JSON' });
  });

  it('validates an http_json config, keeps header values apart and fills every_minutes', () => {
    expect(httpJsonSettings({ url: 'https://x.test', json_pointer: '/a', headers: { 'X-Key': 'k' } })).toEqual({
      config: { url: 'https://x.test', json_pointer: '/a', every_minutes: 60, header_names: ['X-Key'] },
      headers: { 'X-Key': 'k' },
    });
    const bad = httpJsonSettings({
      json_pointer: 'a',
      every_minutes: 10.5,
      headers: { 'Bad Name': 'v', Host: 'h', 'X-A': 'a\nb' },
      other: 1,
    });
    expect('errors' in bad && bad.errors.map((e) => e.field).sort()).toEqual(
      [
        'config.every_minutes',
        'config.headers.Bad Name',
        'config.headers.Host',
        'config.headers.X-A',
        'config.json_pointer',
        'config.other',
        'config.url',
      ].sort(),
    );
    // a change keeps what is not sent
    expect(
      httpJsonSettings({ every_minutes: 15 }, { url: 'https://x.test', json_pointer: '/a', every_minutes: 60, header_names: ['K'] }),
    ).toEqual({
      config: { url: 'https://x.test', json_pointer: '/a', every_minutes: 15, header_names: ['K'] },
      headers: undefined,
    });
  });

  it('turns failing on the 10th failure in a row, hourly then, and active again on a success', () => {
    let s = source({ failures: 8 });
    const fail = { status: 'failed' as const, value: null, error: 'HTTP 500' };
    let r = sourceAfterSync(s, fail, NOW);
    expect(r).toMatchObject({ becameFailing: false, source: { status: 'active', failures: 9, next_run_at: '2026-01-01T00:30:00.000Z' } });
    r = sourceAfterSync(r.source, fail, NOW);
    expect(r).toMatchObject({
      becameFailing: true,
      source: { status: 'failing', failures: 10, last_error: 'HTTP 500', next_run_at: '2026-01-01T01:00:00.000Z' },
    });
    s = r.source;
    expect(sourceAfterSync(s, fail, NOW).becameFailing).toBe(false); // told once
    expect(sourceAfterSync(s, { status: 'unchanged', value: 3, error: null }, NOW).source).toMatchObject({
      status: 'active',
      failures: 0,
      last_error: null,
      last_value: 3,
    });
    expect(nextRunAt(source({ status: 'paused' }), NOW)).toBeNull();
    expect(nextRunAt(source({ kind: 'push' }), NOW)).toBeNull();
  });

  it('names a due source by its due time, tenant and uuid', () => {
    const sk = dueSortKey(NOW, 't-1', 's-1');
    expect(parseDueSortKey(sk)).toEqual({ due: NOW, tenantId: 't-1', sourceUuid: 's-1' });
    expect(sk <= `${NOW}~`).toBe(true);
    expect(sk <= '2025-12-31T23:59:59.999Z~').toBe(false);
  });
});
