import type { DataCtx } from '#shared/db/store.ts';
import type { Loader } from '#shared/list/entity-cache.ts';

/**
 * A list that may start before its caller is known (`apiHandler({ early })`): the token's tenant, the request's
 * loader, and a gate that opens once the caller is known and admitted (a 401 or 429 rejects it). The engine
 * plans and reads its first keys meanwhile and judges nothing until the gate opens (ListRun.gate), so page 1 is
 * two round trips: the caller beside the keys, then the page's records.
 */
export interface ListStart {
  data: DataCtx;
  loader: Loader;
  gate: Promise<unknown>;
}

/** A request context already past its caller (a list run from a command or a worker) as a start with an open gate. */
export const listStart = (start: ListStart | (DataCtx & { loader: Loader })): ListStart =>
  'gate' in start ? start : { data: start, loader: start.loader, gate: Promise.resolve() };
