import type { Client } from 'openapi-fetch';
import type { paths } from './schema.ts';

/**
 * Paging a list by cursor (contract 18), hand-written beside the generated types: every list answers
 * `data.pagy.next_cursor`, the position of its last record, and the next page starts right after it. So a
 * client walking a list sees every record that lives from its first page to its last (and keeps its sort value)
 * exactly once, whatever others create or delete meanwhile; page numbers would skip or repeat records then.
 */

type ListPage = { records: unknown[]; pagy: { next_cursor: string | null } };
type ListAnswer = { content: { 'application/json': { data: ListPage } } };

/** The paths whose GET answers a list (`data.records` and `data.pagy`). */
export type ListPath = {
  [P in keyof paths]: paths[P] extends { get: { responses: { 200: ListAnswer } } } ? P : never;
}[keyof paths];

type ListGet<P extends ListPath> = paths[P] extends { get: infer G } ? G : never;
/** One page of the list at `P`, as the API answers it (`records`, `pagy`, `checks`, `filters`, `type`). */
export type PageOf<P extends ListPath> =
  ListGet<P> extends { responses: { 200: { content: { 'application/json': { data: infer D } } } } } ? D : never;
/** A record of the list at `P`. */
export type RecordOf<P extends ListPath> = PageOf<P> extends { records: Array<infer R> } ? R : never;

type QueryOf<P extends ListPath> = ListGet<P> extends { parameters: { query?: infer Q } } ? Q : never;
type PathParamsOf<P extends ListPath> = ListGet<P> extends { parameters: { path: infer X } } ? X : never;

export interface PagesOptions<P extends ListPath> {
  /** The list's query: filters (`'q[current_status_eq]': 'on_track'`), sort (`'q[s]': 'title asc'`), `per_page`. */
  query?: Omit<NonNullable<QueryOf<P>>, 'page' | 'offset' | 'count' | 'cursor'> & Record<string, string | undefined>;
  /** The path's parameters, for a list under a record (`{ id }` of a goal's history). */
  path?: PathParamsOf<P>;
  /** Resume where an earlier walk stopped: a `next_cursor` it answered. */
  cursor?: string;
}

/** An error answer of a list page: its status and the contract's error body. */
export class ListPageError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`list page failed: ${status} ${JSON.stringify(body)}`);
  }
}

/**
 * The pages of a list, by cursor, until the last: `for await (const page of pages(client, '/rest/v2/objectives',
 * { query: { per_page: '100' } })) ...`. Stops (throws ListPageError) on an error answer; `page.pagy.next_cursor`
 * of the last page read resumes a walk (`cursor`).
 */
export async function* pages<P extends ListPath>(
  client: Client<paths>,
  path: P,
  options: PagesOptions<P> = {},
): AsyncGenerator<PageOf<P>, void, undefined> {
  let cursor = options.cursor;
  // the typed GET of a path chosen at run time: its query and path parameters are typed by PagesOptions above
  const get = client.GET as unknown as (
    p: string,
    init: { params: { query: Record<string, unknown>; path?: unknown } },
  ) => Promise<{ data?: { data: PageOf<P> }; error?: unknown; response: Response }>;
  do {
    const query = { ...(options.query ?? {}), ...(cursor === undefined ? {} : { cursor }) };
    const { data, error, response } = await get(path, { params: { query, ...(options.path ? { path: options.path } : {}) } });
    if (!data) throw new ListPageError(response.status, error);
    yield data.data;
    cursor = (data.data as ListPage).pagy.next_cursor ?? undefined;
  } while (cursor !== undefined);
}

/** Every record of a list, page by page by cursor: `for await (const goal of records(client, '/rest/v2/objectives')) ...`. */
export async function* records<P extends ListPath>(
  client: Client<paths>,
  path: P,
  options: PagesOptions<P> = {},
): AsyncGenerator<RecordOf<P>, void, undefined> {
  for await (const page of pages(client, path, options)) yield* (page as ListPage).records as Array<RecordOf<P>>;
}
