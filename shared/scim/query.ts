import { parse, type Filter } from 'scim2-parse-filter';
import { invalidFilter, invalidValue, ScimRefusal } from '#shared/scim/errors.ts';
import { PROTOTYPE_NAMES } from '#shared/schemas/json-input.ts';

/** The filters this service answers: one comparison (RFC 7644 section 3.4.2.2), on an attribute it indexes or walks. */
export type ScimOp = 'eq' | 'co' | 'sw';
export interface ScimFilter {
  attr: string;
  op: ScimOp;
  value: string;
}

const OPS: ReadonlySet<string> = new Set(['eq', 'co', 'sw']);
/** Room for one comparison on a 320-character userName with a schema URN before it. */
const MAX_FILTER_LENGTH = 1024;

/**
 * Parses `filter` with scim2-parse-filter and keeps what this service answers: a single `eq`, `co` or `sw` on one of
 * `attrs` (canonical names, read in any letter case, optionally after the resource's schema URN) with a string.
 * Anything else is 400 invalidFilter, as RFC 7644 section 3.4.2.2 says for a filter the service does not support,
 * but an attribute name with a part `__proto__`, `constructor` or `prototype`: 400 invalidPath, as contract section 19 says for
 * every SCIM name.
 */
export function parseScimFilter(raw: string, urn: string, attrs: readonly string[]): ScimFilter {
  // the parser's tokenizer copies the rest of the text at each token: bounded, as one comparison needs far less
  if (raw.length > MAX_FILTER_LENGTH) throw invalidFilter(`A filter may be at most ${MAX_FILTER_LENGTH} characters long`);
  let f: Filter;
  try {
    f = parse(raw);
  } catch {
    throw invalidFilter(`The filter ${JSON.stringify(raw.slice(0, 200))} is not a SCIM filter`);
  }
  const supported = `Supported: a single eq, co or sw on ${attrs.join(', ')} with a string value`;
  if (!('attrPath' in f) || !OPS.has(f.op) || !('compValue' in f)) throw invalidFilter(`The filter is not supported. ${supported}`);
  // contract 19: a name part naming a prototype is invalidPath through every SCIM door, filters included
  const prototypePart = f.attrPath.split(/[.:]/).find((part) => PROTOTYPE_NAMES.has(part));
  if (prototypePart !== undefined) throw new ScimRefusal(400, 'invalidPath', `A filter may not name ${prototypePart}`);
  const path = f.attrPath.toLowerCase().startsWith(`${urn.toLowerCase()}:`) ? f.attrPath.slice(urn.length + 1) : f.attrPath;
  const attr = attrs.find((a) => a.toLowerCase() === path.toLowerCase());
  if (!attr) throw invalidFilter(`Cannot filter on ${f.attrPath.slice(0, 200)}. ${supported}`);
  if (typeof f.compValue !== 'string') throw invalidFilter(`${attr} is compared with a string. ${supported}`);
  return { attr, op: f.op as ScimOp, value: f.compValue };
}

/** Whether `actual` passes the comparison; `caseExact` as the attribute's schema says (externalId only). */
export function compare(actual: string | null | undefined, f: ScimFilter, caseExact: boolean): boolean {
  if (actual == null) return false;
  const [a, v] = caseExact ? [actual, f.value] : [actual.toLowerCase(), f.value.toLowerCase()];
  return f.op === 'eq' ? a === v : f.op === 'sw' ? a.startsWith(v) : a.includes(v);
}

export interface ScimPage {
  /** 1-based index of the first result (RFC 7644 section 3.4.2.4; below 1 is 1). */
  startIndex: number;
  /** Results at most on the page, 0-100 (above 100 is 100, the ServiceProviderConfig's maxResults; below 0 is 0). */
  count: number;
}

export const MAX_RESULTS = 100;

function integer(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^-?\d{1,15}$/.test(raw.trim())) throw invalidValue(`${name} must be an integer, got ${JSON.stringify(raw.slice(0, 50))}`);
  return Number(raw);
}

/** The query parameters a SCIM list reads (names in any letter case), with paging parsed; other parameters are ignored, as SCIM allows. */
export function listQuery(pairs: ReadonlyArray<[string, string]>): { params: Map<string, string>; page: ScimPage } {
  const params = new Map(pairs.map(([k, v]) => [k.toLowerCase(), v]));
  const start = integer('startIndex', params.get('startindex')) ?? 1;
  const count = integer('count', params.get('count')) ?? MAX_RESULTS;
  return { params, page: { startIndex: Math.max(1, start), count: Math.min(MAX_RESULTS, Math.max(0, count)) } };
}
