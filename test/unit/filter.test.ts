import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BadRequestError } from '#shared/errors.ts';
import { matchValue, parseFilters, PREDICATES } from '#shared/list/filter.ts';
import { parsePageParams, queryPairs } from '#shared/list/params.ts';

const attrs = {
  uuid: { type: 'string' as const },
  owners_uuid: { type: 'string' as const },
  owners_manager_uuid: { type: 'string' as const },
  current_progress: { type: 'number' as const },
  start_date: { type: 'date' as const },
  is_group: { type: 'boolean' as const },
  created_at: { type: 'timestamp' as const },
};

describe('filter DSL parser', () => {
  it('splits attribute and predicate, preferring the longest attribute and predicate', () => {
    const { filters } = parseFilters(queryPairs('q[owners_manager_uuid_not_null]=1&q[owners_uuid_not_eq]=a&q[uuid_null]=true'), attrs);
    expect(filters.map((f) => [f.attribute, f.predicate])).toEqual([
      ['owners_manager_uuid', 'not_null'],
      ['owners_uuid', 'not_eq'],
      ['uuid', 'null'],
    ]);
  });

  it('reads in-lists both repeated and comma separated, and echoes them', () => {
    const a = parseFilters(queryPairs('q[uuid_in][]=a&q[uuid_in][]=b'), attrs);
    const b = parseFilters(queryPairs('q[uuid_in]=a,b'), attrs);
    expect(a.filters[0]!.value).toEqual(['a', 'b']);
    expect(b.filters[0]!.value).toEqual(['a', 'b']);
    expect(a.echo).toEqual({ uuid_in: ['a', 'b'] });
  });

  it('coerces typed values and refuses bad ones with 400 naming the parameter', () => {
    expect(parseFilters(queryPairs('q[current_progress_gt]=12.5'), attrs).filters[0]!.value).toBe(12.5);
    expect(() => parseFilters(queryPairs('q[current_progress_gt]=abc'), attrs)).toThrow(/q\[current_progress_gt\]/);
    expect(() => parseFilters(queryPairs('q[start_date_lt]=2024-13-45'), attrs)).toThrow(BadRequestError);
    // a well-formed string that is no calendar date (Date.parse would roll it over to March 1st)
    expect(() => parseFilters(queryPairs('q[start_date_lt]=2024-02-30'), attrs)).toThrow(BadRequestError);
    expect(() => parseFilters(queryPairs('q[created_at_gt]=2023-02-29'), attrs)).toThrow(BadRequestError);
    expect(parseFilters(queryPairs('q[start_date_eq]=2024-02-29'), attrs).filters[0]!.value).toBe('2024-02-29');
    expect(() => parseFilters(queryPairs('q[is_group_eq]=maybe'), attrs)).toThrow(BadRequestError);
    expect(parseFilters(queryPairs('q[created_at_gt]=2024-01-01T00:00:00Z'), attrs).filters[0]!.value).toBe('2024-01-01T00:00:00.000Z');
  });

  it('refuses unknown attributes, unknown predicates, predicates of the wrong type and malformed keys', () => {
    expect(() => parseFilters(queryPairs('q[nope_eq]=1'), attrs)).toThrow(/Unknown filter attribute/);
    expect(() => parseFilters(queryPairs('q[uuid_matches]=1'), attrs)).toThrow(/Unknown filter predicate 'matches'/);
    expect(() => parseFilters(queryPairs('q[is_group_cont]=x'), attrs)).toThrow(/does not apply/);
    expect(() => parseFilters(queryPairs('q[uuid_eq=1'), attrs)).toThrow(/Malformed/);
    expect(() => parseFilters(queryPairs('q[s]=bogus desc'), attrs)).toThrow(/sort/);
  });

  it('matches associations when any element matches, and an empty association as null', () => {
    const f = (q: string) => parseFilters(queryPairs(q), attrs).filters[0]!;
    expect(matchValue(['a', 'b'], f('q[owners_uuid_eq]=b'))).toBe(true);
    expect(matchValue(['a'], f('q[owners_uuid_eq]=b'))).toBe(false);
    expect(matchValue([], f('q[owners_uuid_null]=1'))).toBe(true);
    expect(matchValue(['a'], f('q[owners_uuid_null]=1'))).toBe(false);
    expect(matchValue('Hello World', f('q[uuid_cont]=WORLD'))).toBe(true);
    expect(matchValue('Hello', f('q[uuid_start]=he'))).toBe(true);
    expect(matchValue('Hello', f('q[uuid_end]=LO'))).toBe(true);
    expect(matchValue(null, f('q[uuid_not_eq]=x'))).toBe(true);
    expect(matchValue(5, f('q[current_progress_lteq]=5'))).toBe(true);
    expect(matchValue(null, f('q[current_progress_lt]=5'))).toBe(false);
    expect(matchValue('2024-02-01', f('q[start_date_gteq]=2024-01-31'))).toBe(true);
  });

  it('refuses prototype names as filter and sort attributes with 400 naming the parameter', () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype']) {
      expect(() => parseFilters(queryPairs(`q[${name}_eq]=1`), attrs), name).toThrow(new RegExp(`q\\[${name}_eq\\]`));
      expect(() => parseFilters(queryPairs(`q[${name}_in][]=x`), attrs), name).toThrow(BadRequestError);
      expect(() => parseFilters(queryPairs(`q[s]=${name} asc`), attrs), name).toThrow(/Unknown sort attribute/);
    }
  });

  it('keeps list values whole; commas split only the single-value form', () => {
    const value = (q: string) => parseFilters(queryPairs(q), attrs).filters[0]!.value;
    expect(value('q[uuid_in][]=a,b')).toEqual(['a,b']);
    expect(value('q[uuid_in][]=a,b&q[uuid_in][]=c')).toEqual(['a,b', 'c']);
    expect(value('q[uuid_in]=a,b&q[uuid_in]=c')).toEqual(['a,b', 'c']);
    expect(value('q[uuid_not_in]=a,b')).toEqual(['a', 'b']);
  });

  it('reads the sort direction in any case, and uuid values lower-cased', () => {
    expect(parseFilters(queryPairs('q[s]=uuid DESC'), attrs).sort).toEqual({ attribute: 'uuid', direction: 'desc' });
    expect(parseFilters(queryPairs('q[s]=uuid Asc'), attrs).sort).toEqual({ attribute: 'uuid', direction: 'asc' });
    expect(() => parseFilters(queryPairs('q[s]=uuid desc extra'), attrs)).toThrow(BadRequestError);
    expect(parseFilters(queryPairs('q[owners_uuid_eq]=6067F26E-843B-4F5C-B104-9EAC90114CC7'), attrs).filters[0]!.value).toBe(
      '6067f26e-843b-4f5c-b104-9eac90114cc7',
    );
  });

  it('never throws anything but a 400 on arbitrary filter keys and values', () => {
    const key = fc.oneof(
      fc.string(),
      fc
        .tuple(
          fc.constantFrom('__proto__', 'constructor', 'toString', 'uuid', 's'),
          fc.constantFrom('', '_eq', '_in', '_lt', '_null', ' asc'),
        )
        .map(([a, b]) => a + b),
    );
    fc.assert(
      fc.property(key, fc.string(), (k, v) => {
        try {
          parseFilters(
            [
              [`q[${k}]`, v],
              ['q[s]', v],
            ],
            attrs,
          );
        } catch (err) {
          expect(err).toBeInstanceOf(BadRequestError);
        }
      }),
    );
    expect(PREDICATES).toContain('not_cont');
  });
});

describe('list parameters', () => {
  const page = (q: string) => parsePageParams(queryPairs(q)).page;
  it('defaults, aliases, clamps and limit_max', () => {
    expect(page('')).toEqual({ page: 1, perPage: 20, offset: 0, count: false });
    expect(page('limit=5').perPage).toBe(5);
    expect(page('per_page=1000').perPage).toBe(100);
    expect(page('per_page=1000000000').perPage).toBe(100);
    expect(page('limit=99999999999999999999999').perPage).toBe(100);
    expect(page('limit_max=100000000000&per_page=3').perPage).toBe(3);
    expect(page('limit_max=7').perPage).toBe(7);
    expect(page('per_page=50&limit_max=10').perPage).toBe(10);
    expect(page('page=3&offset=4&count=true')).toMatchObject({ page: 3, offset: 4, count: true });
  });
  it('refuses non-numeric or negative values and unknown parameters with 400', () => {
    for (const q of [
      'page=0',
      'page=-1',
      'per_page=abc',
      'offset=-2',
      'count=maybe',
      'pgae=2',
      'page=99999999999999999999',
      'offset=9007199254740993',
    ]) {
      expect(() => page(q), q).toThrow(BadRequestError);
    }
  });
});
