import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BadRequestError, ValidationError } from '#shared/errors.ts';
import { readJsonBody } from '#shared/schemas/json-input.ts';

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
    for (const n of ['1152921504606846976', '9007199254740992', '-9007199254740993', '1e400', '-1e400', '1e-400', '5e-324', '1.00000000000000000001', '3.14159265358979323846', '0.1000000000000000055511151231257827']) {
      const err = refusal(`{"a":{"b":[0,${n}]}}`);
      expect(err, n).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).details, n).toEqual([expect.objectContaining({ field: 'a.b.1', code: 'invalid_number' })]);
    }
  });

  it('keeps every number a double holds as written, in any notation', () => {
    for (const [text, value] of [['9007199254740991', 9007199254740991], ['0.1', 0.1], ['1E2', 100], ['1.50', 1.5], ['-0', -0], ['0.0', 0], ['12345.6e-2', 123.456], ['1e-130', 1e-130], ['0.30000000000000004', 0.30000000000000004]] as const) {
      expect(readJsonBody(`{"v":${text}}`), text).toEqual({ v: value });
    }
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e15, max: 1e15 }).filter((x) => x === 0 || Math.abs(x) >= 1e-130), (x) => {
        expect(readJsonBody(JSON.stringify({ x }))).toEqual({ x: x === 0 ? 0 : x }); // JSON writes -0 as 0
      }),
    );
  });

  it('refuses lone surrogates and NUL in values and keys with 422 invalid_string', () => {
    for (const [text, field] of [['{"name":"a\\ud800"}', 'name'], ['{"l":["ok","\\udfff"]}', 'l.1'], ['{"n":"a\\u0000"}', 'n'], ['{"c":{"k\\ud800":1}}', 'c.k\ud800']]) {
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

  it('keeps __proto__ as an own key, for the schema to refuse', () => {
    const v = readJsonBody('{"__proto__":{"x":1}}') as object;
    expect(Object.keys(v)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
  });
});
