import type { Caller } from '#shared/auth/caller.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import type { Loader } from '#shared/list/entity-cache.ts';
import type { Log } from '#shared/logger.ts';

/** What domain functions receive: the caller, its tenant-confined data access, and per-request caches. */
export interface DomainCtx extends DataCtx {
  caller: Caller;
  loader: Loader;
  log: Log;
  requestId: string;
  /** Uuids of the caller's (non-archived) teams, read once on first use. */
  teams(): Promise<Set<string>>;
}
