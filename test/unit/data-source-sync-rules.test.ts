import { describe, expect, it } from 'vitest';
import type { DataSourceRecord } from '#shared/domain/integrations/entity.ts';
import {
  atPointer,
  headersKept,
  headersRefusal,
  httpJsonSettings,
  isJsonPointer,
  nextRunAt,
  NO_HEADERS,
  numberAt,
  originOf,
  sortedHeaderNames,
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
      config: { url: 'https://x.test', json_pointer: '/a', every_minutes: 60 },
      headers: { 'X-Key': 'k' },
    });
    const bad = httpJsonSettings({
      json_pointer: 'a',
      every_minutes: 10.5,
      headers: { 'Bad Name': 'v', Host: 'h', 'X-A': 'a\nb', 'x-key': '1', 'X-KEY': '2' },
      other: 1,
      header_names: ['X-A'],
    });
    expect('errors' in bad && bad.errors.map((e) => `${e.field} ${e.code}`).sort()).toEqual(
      [
        'config.every_minutes out_of_range',
        'config.headers.Bad Name invalid',
        'config.headers.Host reserved',
        'config.headers.X-A invalid',
        'config.headers.X-KEY duplicate',
        'config.json_pointer invalid',
        'config.other unknown_field',
        'config.header_names read_only',
        'config.url required',
      ].sort(),
    );
    // a change keeps what is not sent; which header values stay is headersKept's
    expect(
      httpJsonSettings({ every_minutes: 15 }, { url: 'https://x.test', json_pointer: '/a', every_minutes: 60, header_names: ['K'] }),
    ).toEqual({
      config: { url: 'https://x.test', json_pointer: '/a', every_minutes: 15 },
      headers: undefined,
    });
  });

  it('keeps header values on their origin only: another path keeps them, another scheme, host or port drops them', () => {
    const bound = source({
      config: { url: 'https://api.x.test/v1/total', json_pointer: '/a', every_minutes: 30, header_names: ['X-Key', 'Authorization'] },
      headers_sealed: 'sealed',
      headers_origin: 'https://api.x.test',
    });
    const kept = { headers_sealed: 'sealed', headers_origin: 'https://api.x.test', header_names: ['Authorization', 'X-Key'] };
    for (const url of ['https://api.x.test/v2/other?q=1', 'https://API.x.test:443/v1/total#f', 'https://api.x.test'])
      expect(headersKept(bound, url), url).toEqual(kept);
    for (const url of ['http://api.x.test/v1/total', 'https://api.x.test:8443/v1/total', 'https://evil.test/v1/total', 'https://x.test/'])
      expect(headersKept(bound, url), url).toEqual(NO_HEADERS);
    expect(NO_HEADERS).toEqual({ headers_sealed: null, headers_origin: null, header_names: [] });
    // values stored before they were bound to an origin: where they were given is unknown, so nowhere
    expect(headersKept({ ...bound, headers_origin: undefined }, 'https://api.x.test/v1/total')).toEqual(NO_HEADERS);
    expect(headersKept(source(), 'https://x.test/v')).toEqual(NO_HEADERS);
    expect(originOf('HTTP://127.0.0.1:80/a')).toBe('http://127.0.0.1');
    expect(sortedHeaderNames({ b: '1', A: '2', a: '3' })).toEqual(['A', 'a', 'b']);
  });

  it('checks at the fetch that the header values go to their origin, whatever wrote the record', () => {
    const bound = source({ headers_sealed: 'sealed', headers_origin: 'https://api.x.test' });
    expect(headersRefusal(bound, new URL('https://api.x.test/other'))).toBeUndefined();
    expect(headersRefusal(source(), new URL('https://evil.test/'))).toBeUndefined(); // nothing to send
    expect(headersRefusal(bound, new URL('https://evil.test/v'))).toBe(
      'its header values were given for https://api.x.test and are not sent to https://evil.test: send config.headers again',
    );
    expect(headersRefusal(bound, new URL('https://api.x.test:444/v'))).toMatch(/not sent to https:\/\/api.x.test:444/);
    expect(headersRefusal({ ...bound, headers_origin: undefined }, new URL('https://api.x.test/v'))).toMatch(
      /stored before they were bound to an origin/,
    );
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
