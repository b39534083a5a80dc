import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BadRequestError, ValidationError } from '#shared/errors.ts';
import { decimalParts, NUMBER_TEXT_MAX, needsSourceText, PROTOTYPE_KEY, readJsonBody, reviveNumber } from '#shared/schemas/json-input.ts';

/** The best of a few runs of `f`, in ms (the least disturbed by the rest of the machine). */
const fastest = (f: () => unknown, runs = 5) => {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    try {
      f();
    } catch {
      /* a refusal is an answer too */
    }
    best = Math.min(best, performance.now() - start);
  }
  return best;
};
/** A character loop over `s`: the least work any reading of a text does, measured beside what is checked. */
const floorOf = (s: string) =>
  fastest(() => {
    let sum = 0;
    for (let i = 0; i < s.length; i++) sum += s.charCodeAt(i);
    return sum;
  });

/** The body rules of docs/architecture.md "Hostile input": numbers kept exactly or refused, strings storable. */
const refusal = (text: string) => {
  try {
    readJsonBody(text);
  } catch (err) {
    return err;
  }
  return undefined;
};

describe('readJsonBody', () => {
  it('refuses numbers it cannot keep exactly with 422 invalid_number naming the field', () => {
    for (const n of [
      '1152921504606846976',
      '9007199254740992',
      '-9007199254740993',
      '1e400',
      '-1e400',
      '1e-400',
      '5e-324',
      '1.00000000000000000001',
      '3.14159265358979323846',
      '0.1000000000000000055511151231257827',
    ]) {
      const err = refusal(`{"a":{"b":[0,${n}]}}`);
      expect(err, n).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).details, n).toEqual([expect.objectContaining({ field: 'a.b.1', code: 'invalid_number' })]);
    }
  });

  it(`refuses a number text longer than ${NUMBER_TEXT_MAX} characters with 422 invalid_number naming the field, valid value or not`, () => {
    expect(NUMBER_TEXT_MAX).toBe(64);
    const longest = `0.1${'0'.repeat(NUMBER_TEXT_MAX - 3)}`; // 0.1 written in exactly the limit
    expect(readJsonBody(`{"v":${longest}}`)).toEqual({ v: 0.1 });
    for (const n of [
      `${longest}0`,
      `0.1${'0'.repeat(200_000)}1`,
      `1${'0'.repeat(100_000)}1e-100001`,
      `-${'9'.repeat(65)}`,
      `1${'0'.repeat(100_000)}e-5`,
      `${'1'.repeat(70)}e-60`,
    ]) {
      const err = refusal(`{"a":[{"b":${n}}]}`);
      expect(err, n.slice(0, 20)).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).details, n.slice(0, 20)).toEqual([
        {
          field: 'a.0.b',
          code: 'invalid_number',
          message: `is written in ${n.length} characters: a number may take at most ${NUMBER_TEXT_MAX}`,
        },
      ]);
    }
  });

  it('reads a body of long digit runs in time linear in its length (against a floor measured beside it)', () => {
    // 50,000 digits first: the quadratic /0+$/ took seconds on these (and the 1M-digit ones would never end)
    for (const n of [50_000, 1_000_000]) {
      for (const text of [`{"v":0.1${'0'.repeat(n)}1}`, `{"v":1${'0'.repeat(n)}1e-${n}}`, `{"v":${'7'.repeat(n)}}`]) {
        const floor = fastest(() => JSON.parse(text)); // the parser reads every character anyway
        expect(
          fastest(() => readJsonBody(text)),
          `${n} digits`,
        ).toBeLessThan(20 * floor + 20);
        expect((refusal(text) as ValidationError).details[0]).toMatchObject({ field: 'v', code: 'invalid_number' });
      }
    }
  });

  it('splits a decimal literal of any length in linear time (the trailing zeros trimmed by a loop)', () => {
    expect(decimalParts('-120.500e3')).toEqual({ negative: true, digits: '1205', exponent: 2 });
    expect(decimalParts('0.000')).toEqual({ negative: false, digits: '', exponent: 0 });
    expect(decimalParts('1e')).toBeUndefined();
    for (const n of [50_000, 1_000_000]) {
      const text = `1${'0'.repeat(n)}1${'0'.repeat(n)}`;
      expect(decimalParts(text)).toEqual({ negative: false, digits: `1${'0'.repeat(n)}1`, exponent: n });
      expect(
        fastest(() => decimalParts(text), 3),
        `${n} digits`,
      ).toBeLessThan(20 * floorOf(text) + 20);
    }
  });

  it('keeps every number a double holds as written, in any notation', () => {
    for (const [text, value] of [
      ['9007199254740991', 9007199254740991],
      ['0.1', 0.1],
      ['1E2', 100],
      ['1.50', 1.5],
      ['-0', -0],
      ['0.0', 0],
      ['12345.6e-2', 123.456],
      ['1e-130', 1e-130],
      ['0.30000000000000004', 0.30000000000000004],
    ] as const) {
      expect(readJsonBody(`{"v":${text}}`), text).toEqual({ v: value });
    }
    fc.assert(
      fc.property(
        fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e15, max: 1e15 }).filter((x) => x === 0 || Math.abs(x) >= 1e-130),
        (x) => {
          expect(readJsonBody(JSON.stringify({ x }))).toEqual({ x: x === 0 ? 0 : x }); // JSON writes -0 as 0
        },
      ),
    );
  });

  it('refuses lone surrogates and NUL in values and keys with 422 invalid_string', () => {
    for (const [text, field] of [
      ['{"name":"a\\ud800"}', 'name'],
      ['{"l":["ok","\\udfff"]}', 'l.1'],
      ['{"n":"a\\u0000"}', 'n'],
      ['{"c":{"k\\ud800":1}}', 'c.k\ud800'],
    ]) {
      const err = refusal(text!);
      expect(err, text).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).details[0], text).toMatchObject({ field, code: 'invalid_string' });
    }
    expect(readJsonBody('{"name":"🎯 \\ud83c\\udfaf"}')).toEqual({ name: '🎯 🎯' });
  });

  it('is 400 for text that is not JSON or nests beyond the parser, never an internal error', () => {
    expect(refusal('{"a":')).toBeInstanceOf(BadRequestError);
    expect(readJsonBody(`${'['.repeat(1000)}${']'.repeat(1000)}`)).toBeInstanceOf(Array);
    expect(refusal(`${'['.repeat(500_000)}${']'.repeat(500_000)}`)).toBeInstanceOf(BadRequestError);
  });

  it('refuses a key named __proto__, constructor or prototype at any depth with 400 naming it, before the other rules', () => {
    for (const [text, fields] of [
      ['{"__proto__":{"x":1}}', ['__proto__']],
      ['{"\\u005f_proto__":{"x":1}}', ['__proto__']], // written with an escape: the parsed key is what counts
      ['{"a":{"constructor":{"prototype":{"x":1}}}}', ['a.constructor', 'a.constructor.prototype']],
      ['{"a":[1,{"b":[{"prototype":1}]}]}', ['a.1.b.0.prototype']],
      // twenty broken numbers first: the prototype key is still found, and it is what the answer is about
      [`{"n":[${Array(30).fill('1e400').join(',')}],"z":{"__proto__":1}}`, ['z.__proto__']],
    ] as const) {
      const err = refusal(text);
      expect(err, text).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).details.map((d) => d.field)).toEqual(fields);
      expect((err as BadRequestError).details.map((d) => d.code)).toEqual(fields.map(() => PROTOTYPE_KEY));
    }
    expect(Object.prototype).not.toHaveProperty('x');
  });

  describe('the fast path (a plain JSON.parse when no number needs its source text)', () => {
    /** What the reviver's parse reads, or 'refused' when it throws (a text that is not JSON, a stack overflow). */
    const revived = (text: string) => {
      try {
        return JSON.parse(text, reviveNumber);
      } catch {
        return 'refused';
      }
    };
    const plain = (text: string) => {
      try {
        return JSON.parse(text);
      } catch {
        return 'refused';
      }
    };
    /** The promise: whenever the fast path is taken, the plain parse reads exactly what the reviver's reads. */
    const sameEitherWay = (text: string) => {
      if (!needsSourceText(text)) expect(plain(text), text.slice(0, 80)).toStrictEqual(revived(text));
    };

    it('takes the reviver for every number whose text a rule reads: an exponent, more than 15 digits, deep nesting', () => {
      for (const n of [
        '1e400',
        '1E2',
        '1e-131',
        '9007199254740993',
        '1152921504606846976',
        '0.1000000000000000000000001',
        '1234567890123456',
      ]) {
        expect(needsSourceText(`{"a":[1,{"b":${n}}]}`), n).toBe(true);
        expect(needsSourceText(n), n).toBe(true);
      }
      expect(needsSourceText(`1${'0'.repeat(200_000)}`)).toBe(true);
      expect(needsSourceText(`${'['.repeat(501)}1${']'.repeat(501)}`)).toBe(true);
      expect(needsSourceText(`${'['.repeat(500)}1${']'.repeat(500)}`)).toBe(false);
      expect(needsSourceText('{"a":"unterminated')).toBe(true); // not JSON: the reviver's parse refuses it
      // and none for what only looks like such a number inside a string, escaped quotes and backslashes included
      for (const text of [
        '{"a":"1e400"}',
        '{"a":"x\\"1234567890123456789"}',
        '{"a\\\\":"\\\\","b":123456789012345}',
        '{"12345678901234567":-0.00000000000001}',
        '[true,false,null,"e",-0,0.5,150]',
      ]) {
        expect(needsSourceText(text), text).toBe(false);
        sameEitherWay(text);
      }
    });

    it('reads every text the same as the reviver whenever it is taken (fast-check: JSON values, hostile numbers and strings)', () => {
      const numberText = fc.oneof(
        fc.integer().map(String),
        fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => JSON.stringify(x)),
        fc.stringMatching(/^-?(0|[1-9]\d{0,20})(\.\d{1,20})?([eE][+-]?\d{1,3})?$/),
      );
      const text = fc.oneof(
        fc.json({ maxDepth: 4 }),
        fc.array(numberText, { maxLength: 8 }).map((ns) => `[${ns.join(',')}]`),
        fc
          .tuple(fc.string({ unit: fc.constantFrom('"', '\\', '1', '9', 'e', '.', '[', ']', 'x') }), numberText)
          .map(([s, n]) => `{${JSON.stringify(s)}:${n},"b":[${JSON.stringify(s)}]}`),
      );
      fc.assert(
        fc.property(text, (t) => sameEitherWay(t)),
        { numRuns: 2000 },
      );
    });
  });

  it('keeps keys that only look like prototype names, and inherited method names', () => {
    const text = '{"__proto__.x":1,"Constructor":2,"prototypes":3,"toString":4,"hasOwnProperty":5,"a":{"proto":6}}';
    expect(readJsonBody(text)).toStrictEqual(JSON.parse(text));
  });
});
