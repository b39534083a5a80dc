import { BadRequestError, ValidationError, type ErrorDetail } from '#shared/errors.ts';

/**
 * The rules every JSON request body meets before its schema is checked (docs/architecture.md, "Hostile
 * input"), so that what the service stores is exactly what the client sent, or the client hears why not:
 *
 *  - Numbers are finite, within ±(2^53 − 1) (the DynamoDB document client refuses larger ones), zero or at
 *    least 1e-130 in magnitude (DynamoDB's smallest), and written with no more precision than an IEEE 754
 *    double keeps (the number's shortest decimal form denotes the same value as the JSON text; any decimal of
 *    at most 15 significant digits does), in a text of at most NUMBER_TEXT_MAX characters. Else 422
 *    `invalid_number` naming the field.
 *  - Strings and object keys are well-formed UTF-16 (no lone surrogate, which UTF-8 and so DynamoDB cannot
 *    hold) and carry no NUL. Else 422 `invalid_string` naming the field.
 *  - No object key, at any depth, is `__proto__`, `constructor` or `prototype` (PROTOTYPE_NAMES). JSON.parse
 *    keeps `__proto__` as an own key, but any code that later copies the body by assignment (`{ ...a }` is
 *    safe, `Object.assign`, a merge, a library walking a path is not) would reach a prototype through it. Else
 *    400 `bad_request` naming the field, detail code PROTOTYPE_KEY, before any other rule: no door passes such
 *    a key on (contract section 19).
 *
 * 1e400 parses to Infinity and 9007199254740993 to 9007199254740992: the parser's view of a number is not
 * enough, so the exact-precision rule reads the number's source text (JSON.parse's reviver context, Node 22).
 */
export const NUMBER_MAX = Number.MAX_SAFE_INTEGER;
export const NUMBER_MIN_MAGNITUDE = 1e-130;
/**
 * The longest JSON number text read. Every number the rules above keep prints in at most 24 characters in
 * its shortest form (`-1.2345678901234567e-130`: sign, 17 significant digits, point, exponent); 64 leaves
 * room for other writers' forms (a fixed-scale decimal's trailing zeros, a small fraction written out,
 * `0.000000000000000000001`) and bounds the work on each number's text: a 1 MB body of one 200,000-digit
 * number is refused after reading its length, before its digits are looked at.
 */
export const NUMBER_TEXT_MAX = 64;

/** A number whose text says more than its double keeps; only ever inside `readJsonBody`. */
class InexactNumber {
  constructor(readonly source: string) {}
}

/** A number whose text is longer than NUMBER_TEXT_MAX; only ever inside `readJsonBody`. */
class OverlongNumber {
  constructor(readonly length: number) {}
}

/** Keys no body may hold, at any depth: through them an assignment reaches an object's prototype. */
export const PROTOTYPE_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
/** The detail code of a key in PROTOTYPE_NAMES (400 bad_request; SCIM answers it as invalidPath, shared/scim/errors.ts). */
export const PROTOTYPE_KEY = 'prototype_key';

/**
 * Parses a request body: 400 when it is not JSON or holds a key in PROTOTYPE_NAMES, 422 naming each value that
 * breaks the rules above.
 */
export function readJsonBody(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text, reviveNumber);
  } catch {
    throw new BadRequestError('Request body is not valid JSON (or nests too deeply to read)'); // a stack overflow in the reviver lands here too
  }
  const { prototypeKeys, hostile } = bodyProblems(value);
  if (prototypeKeys.length)
    throw new BadRequestError(
      `The body may not hold a key named __proto__, constructor or prototype: ${prototypeKeys.map((d) => d.field).join(', ')}`,
      prototypeKeys,
    );
  if (hostile.length) throw new ValidationError(hostile.map((d) => `${d.field ?? 'body'}: ${d.message}`).join('; '), hostile);
  return value;
}

/** JSON.parse reviver that marks numbers whose source text says more than their double keeps (checked by `hostileValueDetails`). */
export function reviveNumber(this: unknown, _key: string, value: unknown, context?: { source?: string }): unknown {
  // the length first: any other look at an overlong text (the precision check below) costs by its length
  if (typeof value === 'number' && context?.source !== undefined && context.source.length > NUMBER_TEXT_MAX)
    return new OverlongNumber(context.source.length);
  if (typeof value === 'number' && Number.isFinite(value) && context?.source !== undefined && !sameDecimal(context.source, value))
    return new InexactNumber(context.source);
  return value;
}

/** The most details an answer names of each kind: the first ones, in the body's order. */
const DETAILS_MAX = 20;

/**
 * What a parsed JSON value (parsed with `reviveNumber`) breaks of the rules, each with its dotted path
 * (`metric.target_value`, `labels.0`): keys in PROTOTYPE_NAMES, and each number, string and key that cannot be
 * stored. One walk over the whole value (a prototype key after twenty bad numbers is still found).
 */
function bodyProblems(root: unknown): { prototypeKeys: ErrorDetail[]; hostile: ErrorDetail[] } {
  const prototypeKeys: ErrorDetail[] = [];
  const hostile: ErrorDetail[] = [];
  const note = (list: ErrorDetail[], d: ErrorDetail) => list.length < DETAILS_MAX && list.push(d);
  // iterative: a body of a million nested arrays must not overflow the stack
  const stack: Array<{ value: unknown; path: string }> = [{ value: root, path: '' }];
  while (stack.length && prototypeKeys.length < DETAILS_MAX) {
    const { value, path } = stack.pop()!;
    const field = path || undefined;
    const full = hostile.length >= DETAILS_MAX; // then only prototype keys are still looked for
    if (typeof value === 'number' || value instanceof InexactNumber || value instanceof OverlongNumber) {
      const problem = full ? undefined : numberProblem(value);
      if (problem) note(hostile, { field, code: 'invalid_number', message: problem });
    } else if (typeof value === 'string') {
      const problem = full ? undefined : stringProblem(value);
      if (problem) note(hostile, { field, code: 'invalid_string', message: problem });
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: join(path, String(i)) });
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (const [k] of entries) {
        if (PROTOTYPE_NAMES.has(k))
          note(prototypeKeys, { field: join(path, k), code: PROTOTYPE_KEY, message: `a key may not be named ${k}` });
        const keyProblem = full ? undefined : stringProblem(k);
        if (keyProblem) note(hostile, { field: join(path, k), code: 'invalid_string', message: `key ${keyProblem}` });
      }
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], path: join(path, entries[i]![0]) });
    }
  }
  return { prototypeKeys, hostile };
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

function numberProblem(value: number | InexactNumber | OverlongNumber): string | undefined {
  if (value instanceof OverlongNumber) return `is written in ${value.length} characters: a number may take at most ${NUMBER_TEXT_MAX}`;
  if (value instanceof InexactNumber)
    return `${value.source.slice(0, 40)} has more digits than the service keeps exactly (at most 15 significant digits are always kept)`;
  if (!Number.isFinite(value)) return 'must be a finite number';
  if (Math.abs(value) > NUMBER_MAX) return `must be between -${NUMBER_MAX} and ${NUMBER_MAX}`;
  if (value !== 0 && Math.abs(value) < NUMBER_MIN_MAGNITUDE) return `must be 0 or at least ${NUMBER_MIN_MAGNITUDE} in magnitude`;
  return undefined;
}

/** Why a string cannot be stored as sent, if it cannot. */
export function stringProblem(s: string): string | undefined {
  if (!(s as string & { isWellFormed(): boolean }).isWellFormed()) return 'must be well-formed Unicode (no lone UTF-16 surrogate)';
  if (s.includes('\u0000')) return 'must not contain NUL characters';
  return undefined;
}

/** Sign, significant digits (no leading or trailing zeros) and exponent of a decimal literal; `undefined` when it is not one. Exported for its test. */
export function decimalParts(text: string): { negative: boolean; digits: string; exponent: number } | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return undefined;
  const fraction = m[3] ?? '';
  let digits = (m[2]! + fraction).replace(/^0+/, '');
  let exponent = Number(m[4] ?? 0) - fraction.length;
  // a loop, not /0+$/: that regex backtracks quadratically over a run of zeros followed by another digit
  let end = digits.length;
  while (end > 0 && digits.charCodeAt(end - 1) === 48 /* '0' */) end--;
  exponent += digits.length - end;
  digits = digits.slice(0, end);
  if (digits === '') return { negative: false, digits: '', exponent: 0 }; // every zero is one zero
  return { negative: m[1] === '-', digits, exponent };
}

/** Whether the JSON number text denotes exactly the value the double's shortest form prints. */
function sameDecimal(source: string, value: number): boolean {
  const a = decimalParts(source);
  const b = decimalParts(String(value));
  return !!a && !!b && a.negative === b.negative && a.digits === b.digits && a.exponent === b.exponent;
}
