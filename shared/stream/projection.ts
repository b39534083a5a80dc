import type { DataCtx } from '#shared/db/data-ctx.ts';
import type { TxOp } from '#shared/db/tx-ops.ts';
import type { IdentifiedEvent } from '#shared/domain/webhooks/events.ts';
import type { Log } from '#shared/logger.ts';
import type { TableChange } from '#shared/table-change.ts';

/** What a projection gets besides the change: data access confined to the change's tenant, a logger. */
export interface ProjectionCtx {
  data: DataCtx;
  log: Log;
}

/**
 * One read-project-write step (docs/architecture.md, "Derived state: the change stream"): `reads` is its only
 * I/O before writing, everything it derives from, read as it is now (strongly consistent); `project` is pure
 * (no I/O, clock or random ids: `now` is the committer's), the writes that bring the derived state in line with
 * what was read, nothing when it already is. The committer (shared/stream/commit.ts) runs it: reads, projects,
 * commits; a lost race (a version read moved) reads and projects again within the store's one retry budget.
 */
export interface Step<S> {
  reads(data: DataCtx): Promise<S>;
  project(state: S, now: string): ProjectionWrites;
}

/**
 * The writes a projection returns, which the committer executes in this order:
 *  - `transactions`, each one transaction, then `packed`, in order in as few transactions as they fit (children
 *    first, for a rollup recompute over 100 goals): every operation conditioned as it says (a replace on the
 *    version read, a create on the item being absent), so a replay or a concurrent writer makes the step read
 *    and project again rather than write twice;
 *  - `messages`, queued once those committed (a replay queues them again: their consumers skip what is done);
 *  - `outbound`, the change's events: recorded in the event feed (the first write of an event id wins), then
 *    published to the bus and fanned out to the webhook endpoints as the feed holds them;
 *  - `steps`, further steps (a fan-out: one per record to bring in line), each read-projected-committed on its
 *    own with its own retries, `concurrency` at once (default 1); once all settled, the first failure fails the
 *    change;
 *  - `log`, one info line, with the number of steps that wrote (or deliveries queued) as `count` when named.
 */
export interface ProjectionWrites {
  transactions?: TxOp[][];
  packed?: TxOp[];
  messages?: Array<{ queue: string; body: unknown }>;
  outbound?: { change: TableChange; events: IdentifiedEvent[] };
  steps?: Step<unknown>[];
  concurrency?: number;
  log?: { message: string; fields: Record<string, unknown>; count?: string; onlyIfCounted?: boolean };
}

/**
 * One concern of derived state kept from the change stream (rollups, current values, notifications, read
 * models, outbound events, history, paths, label names, webhook creators): a step per accepted change. Each
 * must converge: a change may be delivered more than once and, across items, out of order; reading the table
 * as it is now and writing only a difference, conditioned on what was read, makes a replay write nothing. A
 * projection that throws fails the record (retried, then dead-lettered).
 */
export interface Projection<S = unknown> {
  name: string;
  /** Projections that must have applied the same change first (by name); the others run alongside. */
  after?: readonly string[];
  /** Cheap and pure: whether this projection cares about the change. */
  accepts(change: TableChange): boolean;
  /** What it derives from, read now (called only for an accepted change). */
  reads(change: TableChange, data: DataCtx): Promise<S>;
  /** Pure: the writes, from the change and what `reads` returned. */
  project(change: TableChange, state: S, now: string): ProjectionWrites;
}

/** A projection's step for one change. */
export const stepOf = <S>(p: Projection<S>, change: TableChange): Step<S> => ({
  reads: (data) => p.reads(change, data),
  project: (state, now) => p.project(change, state, now),
});
