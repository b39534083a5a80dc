import type { DataCtx } from '#shared/db/data-ctx.ts';
import type { Loader } from '#shared/list/entity-cache.ts';

/**
 * A list that may start before its caller is known (`apiHandler({ early })`): the token's tenant, the request's
 * loader, and the caller's context to come (`ctx`: resolves once the caller is known and admitted; a 401 or 429
 * rejects it). It is the engine's gate (ListRun.gate): the engine plans and reads its first keys meanwhile and
 * judges nothing until it opens, so page 1 is two round trips: the caller beside the keys, then the records.
 */
export interface ListStart<C> {
  data: DataCtx;
  loader: Loader;
  ctx: Promise<C>;
}

/** A start as given, or a request context already past its caller (a list run from a command or a worker) with its gate open. */
export function listStart<C extends DataCtx & { loader: Loader }>(start: ListStart<C> | C): ListStart<C> {
  if ('ctx' in start) return start as ListStart<C>;
  const known = start as C;
  return { data: known, loader: known.loader, ctx: Promise.resolve(known) };
}
