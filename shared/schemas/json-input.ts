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
 * A reviver costs 10 to 80 times a plain parse, so a text is parsed with it only when one of its numbers could
 * need its source text (`needsSourceText`: an exponent or more than 15 digits, or deep nesting); otherwise a plain
 * JSON.parse reads the same value, and the same rules judge it.
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
    value = needsSourceText(text) ? JSON.parse(text, reviveNumber) : JSON.parse(text);
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

/**
 * The deepest nesting the fast path reads (below): JSON.parse with the reviver recurses once a level and overflows
 * the stack some thousands of levels down (400 above); without it the parser would read any depth. Up to this
 * depth both read every text alike.
 */
const FAST_PATH_DEPTH_MAX = 500;
/** The most digits a number may have for the fast path: any decimal of at most 15 significant digits is kept exactly. */
const FAST_PATH_DIGITS_MAX = 15;

/**
 * Whether `text` must be parsed with `reviveNumber`, or a plain JSON.parse (some 10 to 80 times cheaper: V8 hands
 * a reviver each value with its source text) reads it to the same value with the same verdict. Plain is enough
 * when no number of the text has an exponent or more than FAST_PATH_DIGITS_MAX digits (such a number's text is
 * at most 17 characters, so never overlong; denotes exactly its double's shortest form, so never inexact; and
 * lies within ±1e15 and is 0 or at least 1e-15 in magnitude, so no other rule reads its text either) and no
 * value nests deeper than FAST_PATH_DEPTH_MAX. One pass over the characters, strings skipped whole (escapes
 * included); a text that is not JSON may go either way, and is refused the same by either parse.
 */
export function needsSourceText(text: string): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // to the string's closing quote: the next quote not escaped (an odd run of backslashes before it escapes it)
      for (;;) {
        const end = text.indexOf('"', i + 1);
        if (end < 0) return true; // not JSON: the reviver's parse refuses it as well
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === 92 /* \ */) backslashes++;
        i = end;
        if (backslashes % 2 === 0) break;
      }
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > FAST_PATH_DEPTH_MAX) return true;
    } else if (c === 93 /* ] */ || c === 125 /* } */) {
      depth--;
    } else if (c >= 48 && c <= 57) {
      // a number's digits and point (its sign before them is skipped: it changes nothing here)
      let digits = 0;
      for (; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d >= 48 && d <= 57) digits++;
        else if (d !== 46 /* . */) break;
      }
      if (digits > FAST_PATH_DIGITS_MAX) return true;
      const after = text.charCodeAt(i);
      if (after === 101 /* e */ || after === 69 /* E */) return true;
      i--; // the character that ended the number is read by the loop
    }
  }
  return false;
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

/** Where a value sits: its key, and its container's place (joined into a dotted path only when a problem is named). */
interface Place {
  key: string;
  parent: Place | undefined;
}
const pathOf = (place: Place | undefined): string | undefined => {
  const keys: string[] = [];
  for (let p = place; p; p = p.parent) keys.push(p.key);
  return keys.length ? keys.reverse().join('.') : undefined;
};

/** An object or array being walked: its values (an object's in its keys' order) and the next one to look at. */
interface Frame {
  values: unknown[];
  keys: string[] | undefined;
  next: number;
  place: Place | undefined;
}

/**
 * What a parsed JSON value (parsed with `reviveNumber`, or by plain JSON.parse when `needsSourceText` says it may
 * be) breaks of the rules, each with its dotted path (`metric.target_value`, `labels.0`), in the body's order:
 * keys in PROTOTYPE_NAMES, and each number, string and key that cannot be stored. One walk over the whole value (a
 * prototype key after twenty bad numbers is still found), iterative (a body of a million nested arrays must not
 * overflow the stack), and cheap on what passes: a path is built only for a problem, a frame only for a container.
 */
function bodyProblems(root: unknown): { prototypeKeys: ErrorDetail[]; hostile: ErrorDetail[] } {
  const prototypeKeys: ErrorDetail[] = [];
  const hostile: ErrorDetail[] = [];
  const note = (list: ErrorDetail[], d: ErrorDetail) => list.length < DETAILS_MAX && list.push(d);
  /** The place of value `i` of `frame` (the root's: none), made only when it is needed. */
  const placeOf = (frame: Frame | undefined, i: number): Place | undefined =>
    frame && { key: frame.keys ? frame.keys[i]! : String(i), parent: frame.place };
  /** Notes what a number or a string, value `i` of `frame`, breaks, if anything. */
  const check = (value: unknown, frame: Frame | undefined, i: number): void => {
    if (hostile.length >= DETAILS_MAX) return; // then only prototype keys are still looked for
    if (typeof value === 'number' || value instanceof InexactNumber || value instanceof OverlongNumber) {
      const problem = numberProblem(value);
      if (problem) note(hostile, { field: pathOf(placeOf(frame, i)), code: 'invalid_number', message: problem });
    } else if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem) note(hostile, { field: pathOf(placeOf(frame, i)), code: 'invalid_string', message: problem });
    }
  };
  const isContainer = (value: unknown): value is object =>
    value !== null && typeof value === 'object' && !(value instanceof InexactNumber) && !(value instanceof OverlongNumber);
  /** Notes what the keys of an object break; answers the frame that walks its values. */
  const enter = (value: object, place: Place | undefined): Frame => {
    if (Array.isArray(value)) return { values: value, keys: undefined, next: 0, place };
    const keys = Object.keys(value);
    for (const k of keys) {
      if (PROTOTYPE_NAMES.has(k))
        note(prototypeKeys, { field: pathOf({ key: k, parent: place }), code: PROTOTYPE_KEY, message: `a key may not be named ${k}` });
      const keyProblem = hostile.length < DETAILS_MAX ? stringProblem(k) : undefined;
      if (keyProblem) note(hostile, { field: pathOf({ key: k, parent: place }), code: 'invalid_string', message: `key ${keyProblem}` });
    }
    return { values: Object.values(value), keys, next: 0, place };
  };
  const frames: Frame[] = [];
  if (isContainer(root)) frames.push(enter(root, undefined));
  else check(root, undefined, 0);
  while (frames.length && prototypeKeys.length < DETAILS_MAX) {
    const frame = frames[frames.length - 1]!;
    if (frame.next === frame.values.length) {
      frames.pop();
      continue;
    }
    const i = frame.next++;
    const value = frame.values[i];
    if (isContainer(value)) frames.push(enter(value, placeOf(frame, i)));
    else check(value, frame, i);
  }
  return { prototypeKeys, hostile };
}

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
