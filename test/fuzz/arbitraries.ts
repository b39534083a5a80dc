import fc from 'fast-check';

/**
 * fast-check arbitraries derived from the JSON Schemas of the OpenAPI document, which shared/openapi.ts
 * builds from the same zod schemas that validate requests: a valid value of a schema, a hostile or
 * wrongly-typed value, a valid body with one value somewhere replaced, and raw JSON texts no schema admits.
 */

export type Schema = Record<string, any>;

/** A JSON token written verbatim: numbers a JavaScript value cannot carry (1e400, 2^60 + 1, 30 digits). */
export class RawJson {
  constructor(readonly text: string) {}
  toJSON() {
    return `<raw ${this.text}>`; // how fast-check prints a counterexample holding one
  }
}

/** JSON text of a value that may hold RawJson tokens; keys are written as they are (`__proto__` included). */
export function toJsonText(v: unknown): string {
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJsonText).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJsonText(x)}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** Copies a generated value (fast-check reuses values while shrinking, so they are never changed in place). */
function clone(v: unknown): unknown {
  if (v instanceof RawJson || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(clone);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v))
    Object.defineProperty(out, k, { value: clone(x), enumerable: true, writable: true, configurable: true });
  return out;
}

export const HOSTILE_STRINGS = [
  '',
  ' ',
  '\ud800',
  'a\udc00',
  'a\u0000b',
  '__proto__',
  'constructor',
  'toString',
  'x'.repeat(3000),
  '../../etc',
  '%00',
  '💥'.repeat(10),
  '<script>',
  "'; drop table",
  '1e400',
];
export const HOSTILE_NUMBERS = [
  '1e400',
  '-1e400',
  '1152921504606846976',
  '9007199254740993',
  '1.00000000000000000001',
  '1e-400',
  '-0',
  '0.1',
  '1e308',
  '123456789012345678901234567890',
];
export const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

/** Any value of a wrong or hostile kind, for any place in a body. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, [], {}, [null], { a: 1 }),
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.constantFrom(...HOSTILE_NUMBERS).map((t) => new RawJson(t)),
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
);

/**
 * Values whose size is the attack (docs/architecture.md, "Hostile input"): what a backtracking regex or any
 * per-character work super-linear in the length would spend seconds on. Sizes up to 100,000 characters keep a
 * body well under the 1 MiB limit (so the service, not the size check, answers).
 */
export const HUGE_SIZES = [65, 5_000, 50_000, 100_000];
// Most are finite, so that a reader of their text for its precision would read them; a zero run before another
// digit is what the quadratic /0+$/ of issue 25 read again at each of its zeros (seconds at 50,000 digits).
const HUGE_NUMBER_SHAPES: Record<string, (n: number) => string> = {
  digits: (n) => `0.${'9'.repeat(n)}`,
  negative: (n) => `-${'1'.repeat(n)}e-${n}`,
  zeroRun: (n) => `1${'0'.repeat(n)}1e-${n}`,
  fractionZeroRun: (n) => `0.1${'0'.repeat(n)}1`,
  twoZeroRuns: (n) => `1${'0'.repeat(n >> 1)}1${'0'.repeat(n >> 1)}1e-${n}`,
  infinite: (n) => `1${'0'.repeat(n)}1`,
  zerosThenExponent: (n) => `1${'0'.repeat(n)}e-5`,
  allZeros: (n) => `0.${'0'.repeat(n)}`,
};
/** The worst of them, which every write route of the fuzz suite is sent first. */
export const WORST_NUMBER = HUGE_NUMBER_SHAPES.fractionZeroRun!(100_000);
/** A JSON number text of `n` characters or so: every one is longer than a number may be written in (422 invalid_number). */
export const hugeNumber = (sizes = HUGE_SIZES): fc.Arbitrary<RawJson> =>
  fc
    .tuple(fc.constantFrom(...sizes), fc.constantFrom(...Object.keys(HUGE_NUMBER_SHAPES)))
    .map(([n, shape]) => new RawJson(HUGE_NUMBER_SHAPES[shape]!(n)));
/** A long run of one unit, ended by another character (so a pattern anchored at the end fails only at the last one). */
export const hugeString = (sizes = HUGE_SIZES): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.constantFrom(...sizes),
      fc.constantFrom(' ', '0', '9', '_', '.', '-', '*', '\n', '\t', 'a', 'é', '@.', '<document>', '---\n', '%2F', '\\'),
      fc.constantFrom('!', '\u0000', ''),
    )
    .map(([n, unit, end]) => unit.repeat(Math.ceil(n / unit.length)) + end);
/** Arrays or objects nested `depth` deep. */
export const deepNesting: fc.Arbitrary<RawJson> = fc
  .tuple(fc.constantFrom(11, 1_000, 20_000), fc.boolean())
  .map(([d, arrays]) => new RawJson(arrays ? `${'['.repeat(d)}${']'.repeat(d)}` : `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`));

export type HugeKind = 'number' | 'string' | 'nesting';
const hugeValue: fc.Arbitrary<{ kind: HugeKind; value: unknown }> = fc.oneof(
  { arbitrary: hugeNumber().map((value) => ({ kind: 'number' as const, value })), weight: 2 },
  { arbitrary: hugeString().map((value) => ({ kind: 'string' as const, value })), weight: 1 },
  { arbitrary: deepNesting.map((value) => ({ kind: 'nesting' as const, value })), weight: 1 },
);

/** A body with one huge value: in a valid body's place, as an added field, or the whole body; `kind` says which. */
export function hugeBodyArb(schema: Schema | undefined, env: Env): fc.Arbitrary<{ kind: HugeKind; text: string }> {
  const whole = hugeValue.map(({ kind, value }) => ({ kind, text: toJsonText(value) }));
  if (!schema)
    return fc.oneof(
      whole,
      hugeValue.map(({ kind, value }) => ({ kind, text: toJsonText({ x: value }) })),
    );
  const placed = hugeValue.chain(({ kind, value }) =>
    mutatedArb(schema, env, fc.constant(value)).map((body) => ({ kind, text: toJsonText(body) })),
  );
  return fc.oneof({ arbitrary: placed, weight: 4 }, { arbitrary: whole, weight: 1 });
}

/** Raw request bodies that no schema admits (or that are empty). */
export const rawGarbage = fc.constantFrom(
  '',
  ' ',
  '{',
  '}',
  'null',
  '[]',
  '"text"',
  '42',
  'true',
  '{"a":',
  '{"a":1,}',
  `${'['.repeat(5000)}${']'.repeat(5000)}`,
  '{"__proto__":{"admin":true}}',
  '\u0000',
  '{"a":"\\ud800"}',
  '{"x":1e400}',
);

export interface Env {
  resolve(ref: string): Schema;
  /** Real ids to use for a uuid field, by its name (`goal_uuid`, `owner_uuids`, ...); may be empty. */
  idsFor(field: string): string[];
  /** URLs a `url` field may take that the service accepts (a webhook's receiver). */
  urls: string[];
  /** Time period start and end the fixtures use, so dates are often inside it. */
  dates: string[];
}

const UUID_PATTERN = /uuid|\[0-9a-fA-F\]\{8\}/;
const DATE_PATTERN = /\\d\{4\}-\\d\{2\}-\\d\{2\}/;

export function uuidArb(env: Env, field: string): fc.Arbitrary<string> {
  const real = env.idsFor(field);
  const random = fc.uuid();
  if (!real.length) return random;
  return fc.oneof(
    { arbitrary: fc.constantFrom(...real), weight: 6 },
    { arbitrary: fc.constantFrom(...real).map((u) => u.toUpperCase()), weight: 1 },
    { arbitrary: random, weight: 1 },
  );
}

const dateArb = (env: Env) =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...env.dates), weight: 3 },
    {
      arbitrary: fc
        .date({ min: new Date('2024-06-01'), max: new Date('2025-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10)),
      weight: 2,
    },
    { arbitrary: fc.constantFrom('2025-02-30', '2025-13-01', '0000-00-00', '9999-12-31'), weight: 1 },
  );

/** A value the schema admits (mostly: patterns and rules the document states in prose are not always met). */
export function validArb(schema: Schema, env: Env, field = '', depth = 0, minimal = false): fc.Arbitrary<unknown> {
  if (schema.$ref) return validArb(env.resolve(schema.$ref), env, field, depth, minimal);
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return fc.oneof(...variants.map((s: Schema) => validArb(s, env, field, depth, minimal)));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((t) => validArb({ ...schema, type: t }, env, field, depth, minimal)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000 });
    case 'number': {
      // subnormal doubles (5e-324) are below what DynamoDB keeps: a rule of their own, exercised by hostileValue
      const double = (min: number, max: number) =>
        fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((x) => (Math.abs(x) < 1e-100 ? 0 : x));
      return schema.minimum !== undefined || schema.maximum !== undefined
        ? fc.oneof(
            fc.integer({ min: Math.ceil(schema.minimum ?? -1000), max: Math.floor(schema.maximum ?? 1000) }),
            double(schema.minimum ?? -1000, schema.maximum ?? 1000),
          )
        : fc.oneof(
            fc.integer({ min: -1000, max: 1000 }),
            double(-1e6, 1e6),
            fc.constantFrom(0, 100, 9007199254740991, -9007199254740991, 0.1),
          );
    }
    case 'string': {
      if (schema.pattern && UUID_PATTERN.test(schema.pattern)) return uuidArb(env, field);
      if (schema.pattern && DATE_PATTERN.test(schema.pattern)) return dateArb(env);
      if (schema.format === 'email')
        return fc
          .tuple(fc.stringMatching(/^[a-z0-9]{1,12}$/), fc.constantFrom('example.test', 'EXAMPLE.test'))
          .map(([a, d]) => `${a}@${d}`);
      if (schema.format === 'uri') return fc.constantFrom('https://example.test/a.png', 'http://x.test/', 'javascript:alert(1)');
      const max = Math.min(schema.maxLength ?? 40, 40);
      return fc.oneof(
        { arbitrary: fc.string({ minLength: Math.min(schema.minLength ?? 1, max), maxLength: max }), weight: 4 },
        { arbitrary: fc.stringMatching(/^[A-Za-z][A-Za-z0-9 _-]{0,20}$/), weight: 4 },
        { arbitrary: fc.constantFrom('', ' ', 'é🎯'), weight: 1 },
        // a url field's schema says only "string": without URLs it accepts, nothing registers
        ...(field === 'url' ? [{ arbitrary: fc.constantFrom(...env.urls), weight: 8 }] : []),
      );
    }
    case 'array': {
      const items = schema.items ?? {};
      const maxLength = Math.min(schema.maxItems ?? 3, depth > 1 ? 1 : 3);
      // uuid lists are sets in the service: draw distinct values mostly
      return fc.array(validArb(items, env, field.replace(/s$/, ''), depth + 1, minimal), {
        maxLength: minimal ? Math.min(maxLength, 1) : maxLength,
        minLength: Math.min(schema.minItems ?? 0, maxLength),
      });
    }
    default: {
      if (!schema.properties)
        return depth > 2
          ? fc.constant({})
          : fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<unknown>, { maxKeys: 3 });
      const required = new Set<string>(schema.required ?? []);
      const props: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, s] of Object.entries<Schema>(schema.properties))
        if (!minimal || required.has(name)) props[name] = validArb(s, env, name, depth + 1, minimal);
      // minimal: the required fields only, the body most likely to pass every rule of the service
      return fc.record(props, { requiredKeys: [...required].filter((k) => k in props) });
    }
  }
}

/** The positions of a value where a field could be replaced or added: [container, key]. */
function positions(v: unknown, out: Array<[Record<string, unknown> | unknown[], string | number]> = []) {
  if (Array.isArray(v)) v.forEach((x, i) => (out.push([v, i]), positions(x, out)));
  else if (v !== null && typeof v === 'object' && !(v instanceof RawJson))
    for (const [k, x] of Object.entries(v)) out.push([v as Record<string, unknown>, k]), positions(x, out);
  return out;
}

/**
 * A valid body with one place broken: a value replaced by a hostile one, or a key added (an unknown field,
 * a prototype name, a field the service owns such as uuid or tenant_uuid).
 */
export function mutatedArb(schema: Schema, env: Env, values: fc.Arbitrary<unknown> = hostileValue): fc.Arbitrary<unknown> {
  const addedKey = fc.constantFrom(...PROTOTYPE_NAMES, 'uuid', 'tenant_uuid', 'creator_uuid', 'unknown_field', '');
  return fc.tuple(validArb(schema, env), fc.nat(), values, fc.option(addedKey, { nil: undefined })).map(([valid, at, value, key]) => {
    const body = clone(valid);
    const spots = positions(body);
    if (key !== undefined || !spots.length) {
      const target = (spots.length && key !== undefined ? spots[at % spots.length]![0] : body) as Record<string, unknown>;
      const container =
        target !== null && typeof target === 'object' && !Array.isArray(target) ? target : (body as Record<string, unknown>);
      if (container !== null && typeof container === 'object')
        Object.defineProperty(container, key ?? 'unknown_field', { value, enumerable: true, writable: true, configurable: true });
      return body;
    }
    const [container, k] = spots[at % spots.length]!;
    (container as Record<string | number, unknown>)[k] = value;
    return body;
  });
}

/** A request body text: valid, one place broken, or garbage, weighted towards what reaches the service's rules. */
export function bodyTextArb(schema: Schema | undefined, env: Env): fc.Arbitrary<string> {
  if (!schema)
    return fc.oneof(
      { arbitrary: fc.constantFrom('', '{}'), weight: 4 },
      { arbitrary: fc.dictionary(fc.constantFrom(...PROTOTYPE_NAMES, 'x'), hostileValue, { maxKeys: 2 }).map(toJsonText), weight: 2 },
      { arbitrary: rawGarbage, weight: 1 },
    );
  return fc.oneof(
    { arbitrary: validArb(schema, env, '', 0, true).map(toJsonText), weight: 3 },
    { arbitrary: validArb(schema, env).map(toJsonText), weight: 4 },
    { arbitrary: mutatedArb(schema, env).map(toJsonText), weight: 4 },
    { arbitrary: rawGarbage, weight: 1 },
  );
}
