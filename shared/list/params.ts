import { BadRequestError } from '#shared/errors.ts';

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 100;
/** Upper bound of page and offset (the per-page values are clamped to MAX_PER_PAGE instead). */
export const MAX_POSITION = 100_000_000;

export interface PageParams {
  page: number;
  perPage: number;
  offset: number;
  count: boolean;
  /** `cursor` (contract 18): where the page starts instead of page and offset (shared/list/cursor.ts). */
  cursor?: string;
}

const PAGE_KEYS = new Set(['page', 'per_page', 'limit', 'limit_max', 'offset', 'count', 'cursor']);

/** Splits a raw query string into pairs, keeping repeated keys apart (API Gateway joins them with commas). */
export function queryPairs(rawQueryString: string | undefined): Array<[string, string]> {
  return [...new URLSearchParams(rawQueryString ?? '')];
}

/** A page position or size; `clampTo` caps a size of any length (per_page=1000000000 is 100), a position past MAX_POSITION is 400. */
function nonNegativeInt(name: string, raw: string | undefined, min: number, clampTo?: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw.trim()))
    throw new BadRequestError(`${name} must be a non-negative integer`, [{ field: name, code: 'invalid_value', message: `got '${raw}'` }]);
  const n = Number(raw);
  if (n < min)
    throw new BadRequestError(`${name} must be at least ${min}`, [{ field: name, code: 'invalid_value', message: `got '${raw}'` }]);
  if (clampTo !== undefined) return Math.min(n, clampTo);
  // far beyond any list, and it keeps page arithmetic exact (well inside Number.MAX_SAFE_INTEGER)
  if (n > MAX_POSITION)
    throw new BadRequestError(`${name} must be at most ${MAX_POSITION}`, [{ field: name, code: 'invalid_value', message: `got '${raw}'` }]);
  return n;
}

/**
 * The spec's common list parameters. per_page/limit above 100 are clamped (contract section 1);
 * limit_max caps the page size and is the size when neither per_page nor limit is sent.
 */
export function parsePageParams(
  pairs: Array<[string, string]>,
  extraKeys: string[] = [],
): { page: PageParams; rest: Array<[string, string]> } {
  const single = new Map<string, string>();
  const rest: Array<[string, string]> = [];
  for (const [k, v] of pairs) {
    // two cursors name two positions: which one was meant is not for the service to guess
    if (k === 'cursor' && single.has(k))
      throw new BadRequestError('cursor is given twice', [{ field: k, code: 'invalid_cursor', message: 'send one cursor' }]);
    if (PAGE_KEYS.has(k)) single.set(k, v);
    else if (k.startsWith('q[') || extraKeys.includes(k)) rest.push([k, v]);
    else
      throw new BadRequestError(`Unknown query parameter ${k}`, [
        { field: k, code: 'unknown_parameter', message: 'not a list parameter or q[...] filter' },
      ]);
  }
  const page = nonNegativeInt('page', single.get('page'), 1) ?? 1;
  const perPageRaw = nonNegativeInt('per_page', single.get('per_page'), 1, MAX_PER_PAGE);
  const limitRaw = nonNegativeInt('limit', single.get('limit'), 1, MAX_PER_PAGE);
  const limitMax = nonNegativeInt('limit_max', single.get('limit_max'), 1, MAX_PER_PAGE);
  const offset = nonNegativeInt('offset', single.get('offset'), 0) ?? 0;
  const countRaw = single.get('count');
  if (countRaw !== undefined && !['true', 'false', '1', '0'].includes(countRaw)) {
    throw new BadRequestError('count must be true or false', [{ field: 'count', code: 'invalid_value', message: `got '${countRaw}'` }]);
  }
  const cursor = single.get('cursor');
  // a cursor is the page's position: a page number, an offset or a count beside it would say something else
  if (cursor !== undefined)
    for (const k of ['page', 'offset', 'count'])
      if (k === 'count' ? countRaw === 'true' || countRaw === '1' : single.has(k))
        throw new BadRequestError(`cursor cannot be combined with ${k}`, [
          { field: k, code: 'invalid_value', message: 'a cursor page starts where its cursor says; send page/offset/count without cursor' },
        ]);
  if (cursor === '')
    throw new BadRequestError('cursor is empty', [
      { field: 'cursor', code: 'invalid_cursor', message: 'send pagy.next_cursor as it came' },
    ]);
  let perPage = perPageRaw ?? limitRaw ?? limitMax ?? DEFAULT_PER_PAGE;
  if (limitMax !== undefined) perPage = Math.min(perPage, limitMax);
  perPage = Math.min(perPage, MAX_PER_PAGE);
  return {
    page: { page, perPage, offset, count: countRaw === 'true' || countRaw === '1', ...(cursor === undefined ? {} : { cursor }) },
    rest,
  };
}
