import { UUID_RE } from '#shared/ids.ts';
import { BadRequestError } from '#shared/errors.ts';

/**
 * The query filter DSL (contract section 4): `q[<attribute>_<predicate>]=<value>`, all ANDed.
 * One parser for every list endpoint; each resource declares its attributes (see engine.ts).
 * Attribute names come from clients, so they are looked up in a Map, never on the declaring object: `__proto__`,
 * `constructor` or `toString` are unknown attributes (400), not the prototype's members.
 */
export const PREDICATES = [
  'not_eq',
  'not_in',
  'not_cont',
  'not_null',
  'lteq',
  'gteq',
  'present',
  'blank',
  'start',
  'end',
  'cont',
  'null',
  'true',
  'false',
  'eq',
  'in',
  'lt',
  'gt',
] as const;
export type Predicate = (typeof PREDICATES)[number];

export type AttrType = 'string' | 'number' | 'date' | 'timestamp' | 'boolean';

export interface ParsedFilter {
  attribute: string;
  predicate: Predicate;
  /** Normalized value: string/number/boolean, an array of them for in/not_in, true for null-ish predicates. */
  value: unknown;
  /** The raw parameter name, echoed in `data.filters`. */
  key: string;
}

export interface ParsedSort {
  attribute: string;
  direction: 'asc' | 'desc';
}

const NULLISH: Predicate[] = ['null', 'not_null', 'present', 'blank', 'true', 'false'];
const ORDERED: Predicate[] = ['lt', 'lteq', 'gt', 'gteq'];
const TEXT: Predicate[] = ['cont', 'not_cont', 'start', 'end'];

const allowed: Record<AttrType, Predicate[]> = {
  string: ['eq', 'not_eq', 'in', 'not_in', ...TEXT, ...ORDERED, 'null', 'not_null', 'present', 'blank'],
  number: ['eq', 'not_eq', 'in', 'not_in', ...ORDERED, 'null', 'not_null', 'present', 'blank'],
  date: ['eq', 'not_eq', 'in', 'not_in', ...ORDERED, 'null', 'not_null', 'present', 'blank'],
  timestamp: ['eq', 'not_eq', 'in', 'not_in', ...ORDERED, 'null', 'not_null', 'present', 'blank'],
  boolean: ['eq', 'not_eq', 'true', 'false', 'null', 'not_null', 'present', 'blank'],
};

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
/** A real calendar date (Date.parse alone rolls 2024-02-30 over to March 1st). */
const isCalendarDate = (raw: string) => DATE_RE.test(raw) && !Number.isNaN(Date.parse(raw)) && new Date(raw).toISOString().startsWith(raw);

function coerce(attribute: string, type: AttrType, raw: string, key: string): string | number | boolean {
  const bad = (what: string) =>
    new BadRequestError(`Filter ${key}: '${raw}' is not ${what}`, [{ field: key, code: 'invalid_value', message: `expected ${what}` }]);
  switch (type) {
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw bad('a number');
      return n;
    }
    case 'date':
      if (!isCalendarDate(raw)) throw bad('a date (YYYY-MM-DD)');
      return raw;
    case 'timestamp': {
      if (DATE_RE.test(raw)) {
        if (!isCalendarDate(raw)) throw bad('a date or an ISO 8601 timestamp');
        return raw; // a date compares against timestamps as its midnight (string order)
      }
      const t = Date.parse(raw);
      if (Number.isNaN(t)) throw bad('an ISO 8601 timestamp');
      return new Date(t).toISOString();
    }
    case 'boolean':
      if (['true', '1'].includes(raw)) return true;
      if (['false', '0'].includes(raw)) return false;
      throw bad('a boolean (true/false)');
    default:
      void attribute;
      // a uuid names the same record in any letter case; records and keys hold it lower-cased
      return UUID_RE.test(raw) ? raw.toLowerCase() : raw;
  }
}

export type AttributeTable<A extends { type: AttrType } = { type: AttrType }> = Record<string, A> | ReadonlyMap<string, A>;

/** The declared attributes as a Map (own entries only), so a client-sent name never reaches Object.prototype. */
export function attributeMap<A extends { type: AttrType }>(attributes: AttributeTable<A>): ReadonlyMap<string, A> {
  return attributes instanceof Map ? attributes : new Map(Object.entries(attributes));
}

export function parseFilterKey(key: string, table: AttributeTable): { attribute: string; predicate: Predicate } {
  const attributes = attributeMap(table);
  for (const p of PREDICATES) {
    if (key.endsWith(`_${p}`)) {
      const attribute = key.slice(0, -(p.length + 1));
      if (attributes.has(attribute)) return { attribute, predicate: p };
    }
  }
  // Name the part that is wrong: a known attribute with an unknown predicate, or an unknown attribute.
  const names = [...attributes.keys()];
  const known = names.filter((a) => key.startsWith(`${a}_`)).sort((a, b) => b.length - a.length)[0];
  if (known)
    throw new BadRequestError(`Unknown filter predicate '${key.slice(known.length + 1)}' in q[${key}]`, [
      { field: `q[${key}]`, code: 'unknown_predicate', message: `predicates: ${PREDICATES.join(', ')}` },
    ]);
  throw new BadRequestError(`Unknown filter attribute in q[${key}]`, [
    { field: `q[${key}]`, code: 'unknown_attribute', message: `filterable: ${names.join(', ')}` },
  ]);
}

/** `q[s]=<attribute> [asc|desc]`, the direction in any letter case. */
function parseSort(value: string, attributes: ReadonlyMap<string, unknown>): ParsedSort {
  const [attribute = '', dir = 'asc', ...extra] = value.trim().split(/\s+/);
  if (attribute !== 'created_at' && !attributes.has(attribute)) {
    throw new BadRequestError(`Unknown sort attribute '${attribute}'`, [
      { field: 'q[s]', code: 'unknown_attribute', message: `'${attribute}' is not sortable` },
    ]);
  }
  const direction = dir.toLowerCase();
  if ((direction !== 'asc' && direction !== 'desc') || extra.length) {
    throw new BadRequestError(`Sort must be '<attribute> asc' or '<attribute> desc'`, [
      { field: 'q[s]', code: 'invalid_value', message: 'asc or desc' },
    ]);
  }
  return { attribute, direction };
}

/**
 * Parses `q[...]` pairs (repeated keys kept apart, as read from rawQueryString) into typed filters.
 * Throws 400 naming the offending parameter.
 */
export function parseFilters(
  pairs: Array<[string, string]>,
  table: AttributeTable,
): { filters: ParsedFilter[]; sort?: ParsedSort; echo: Record<string, unknown> } {
  const attributes = attributeMap(table);
  // values per filter key, and whether they came as a list (`q[x_in][]=`, or the key repeated)
  const grouped = new Map<string, { values: string[]; listForm: boolean }>();
  let sort: ParsedSort | undefined;
  for (const [rawKey, value] of pairs) {
    const m = /^q\[([^\]]+)\](\[\])?$/.exec(rawKey);
    if (!m)
      throw new BadRequestError(`Malformed filter parameter ${rawKey}`, [
        { field: rawKey, code: 'malformed', message: 'expected q[<attribute>_<predicate>]' },
      ]);
    const key = m[1]!;
    if (key === 's') {
      sort = parseSort(value, attributes);
      continue;
    }
    const group = grouped.get(key);
    if (group) {
      group.values.push(value);
      group.listForm = true;
    } else grouped.set(key, { values: [value], listForm: m[2] !== undefined });
  }
  const filters: ParsedFilter[] = [];
  const echo: Record<string, unknown> = {};
  for (const [key, { values, listForm }] of grouped) {
    const { attribute, predicate } = parseFilterKey(key, attributes);
    const type = attributes.get(attribute)!.type;
    if (!allowed[type].includes(predicate)) {
      throw new BadRequestError(`Predicate '${predicate}' does not apply to ${type} attribute ${attribute}`, [
        { field: `q[${key}]`, code: 'unknown_predicate', message: `allowed: ${allowed[type].join(', ')}` },
      ]);
    }
    let value: unknown;
    if (predicate === 'in' || predicate === 'not_in') {
      // commas separate values only in the single-value form `q[x_in]=a,b`; list values are kept whole
      const list = (listForm ? values : values[0]!.split(',')).map((v) => v.trim()).filter((v) => v !== '');
      if (list.length === 0)
        throw new BadRequestError(`Filter q[${key}] needs at least one value`, [
          { field: `q[${key}]`, code: 'invalid_value', message: 'empty list' },
        ]);
      if (list.length > 100)
        throw new BadRequestError(`Filter q[${key}] takes at most 100 values`, [
          { field: `q[${key}]`, code: 'too_many', message: 'at most 100 values' },
        ]);
      value = list.map((v) => coerce(attribute, type, v, `q[${key}]`));
    } else if (NULLISH.includes(predicate)) {
      const raw = values[values.length - 1]!;
      if (!['true', '1', 'false', '0'].includes(raw))
        throw new BadRequestError(`Filter q[${key}] takes true or 1`, [
          { field: `q[${key}]`, code: 'invalid_value', message: 'true or 1' },
        ]);
      value = raw === 'true' || raw === '1';
    } else {
      value = coerce(attribute, type, values[values.length - 1]!, `q[${key}]`);
    }
    filters.push({ attribute, predicate, value, key });
    echo[key] = value;
  }
  return { filters, sort, echo };
}

const isBlank = (v: unknown) => v === null || v === undefined || (typeof v === 'string' && v.trim() === '');
const lower = (v: unknown) => String(v).toLowerCase();

/** Compares one scalar against one filter; ordered compares work on numbers and on ISO strings alike. */
export function matchScalar(v: unknown, f: ParsedFilter): boolean {
  const x = f.value;
  switch (f.predicate) {
    case 'eq':
      return !isBlank(v) && equal(v, x);
    case 'not_eq':
      return isBlank(v) || !equal(v, x);
    case 'in':
      return !isBlank(v) && (x as unknown[]).some((y) => equal(v, y));
    case 'not_in':
      return isBlank(v) || !(x as unknown[]).some((y) => equal(v, y));
    case 'lt':
      return !isBlank(v) && (v as number | string) < (x as number | string);
    case 'lteq':
      return !isBlank(v) && (v as number | string) <= (x as number | string);
    case 'gt':
      return !isBlank(v) && (v as number | string) > (x as number | string);
    case 'gteq':
      return !isBlank(v) && (v as number | string) >= (x as number | string);
    case 'cont':
      return !isBlank(v) && lower(v).includes(lower(x));
    case 'not_cont':
      return isBlank(v) || !lower(v).includes(lower(x));
    case 'start':
      return !isBlank(v) && lower(v).startsWith(lower(x));
    case 'end':
      return !isBlank(v) && lower(v).endsWith(lower(x));
    case 'null':
      return (v === null || v === undefined) === x;
    case 'not_null':
      return (v !== null && v !== undefined) === x;
    case 'present':
      return !isBlank(v) === x;
    case 'blank':
      return isBlank(v) === x;
    case 'true':
      return x ? v === true : v !== true;
    case 'false':
      return x ? v === false : v !== false;
  }
}

function equal(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a.toLowerCase() === b.toLowerCase();
  return a === b;
}

/** An association value is an array: the record matches when any associated value does (an empty association is one null). */
export function matchValue(v: unknown, f: ParsedFilter): boolean {
  if (Array.isArray(v)) return (v.length === 0 ? [null] : v).some((e) => matchScalar(e, f));
  return matchScalar(v, f);
}
