import { nowIso, sleep } from '#shared/clock.ts';
import type { BaseRecord, EntityDef, Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { AlreadyCreatedError } from '#shared/db/tx-errors.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { accept, refuse, type Decision } from '#shared/decision.ts';
import { conditionFailed, ConcurrentUpdateError, TransactionConflictError, type AppError } from '#shared/errors.ts';

/**
 * The one retry budget of a write that lost an optimistic race (ConcurrentUpdateError): attempts in all (and
 * CONFLICT_DEADLINE_MS in time), never nested. Sized for the worst burst the service promises to absorb without a 409: many concurrent
 * check-ins under one rollup parent (each round of retries lets at least one writer of each contended item
 * through; test/e2e/checkins-progress.test.ts runs 40 under one parent). Back-off is exponential with full
 * jitter, capped, so a burst spreads out instead of colliding in lockstep.
 */
export const CONFLICT_ATTEMPTS = 64;
/**
 * And a time budget: no retry starts (back-off included) past this long after the first attempt, so a request
 * answers 409 conflict ("retry the request") well inside its function's 10 s timeout instead of being cut off
 * mid-write by Lambda (64 attempts at up to 400 ms of back-off each could outlast it).
 */
export const CONFLICT_DEADLINE_MS = 7_000;
const BACKOFF_CAP_MS = 400;
const backoff = (n: number) => Math.random() * Math.min(BACKOFF_CAP_MS, 10 * 2 ** n);

/**
 * Runs a read-check-write attempt again when its transaction lost an optimistic race, within the one budget
 * (CONFLICT_ATTEMPTS). Creates need it because two overlapping transactions on one uniqueness claim can be
 * cancelled as a conflict rather than a failed condition (the retry then sees the claim: 422 taken); deletes
 * because they are conditioned on the version read. Commands use runCommand, which retries through this.
 */
export async function retryOnConflict<T>(
  attempt: (n: number) => Promise<T>,
  retries: (err: unknown) => boolean = (err) => err instanceof ConcurrentUpdateError,
): Promise<T> {
  const started = Date.now();
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (!retries(err) || n >= CONFLICT_ATTEMPTS - 1) throw err;
      const wait = backoff(n);
      if (Date.now() - started + wait > CONFLICT_DEADLINE_MS) throw err;
      await sleep(wait);
    }
  }
}

/**
 * Makes a conditioned write that reads a failed condition as its answer (already done, taken by another) again
 * while DynamoDB cancels it for a transaction conflict (nothing written, nothing decided), within the one budget.
 */
export const retryTransactionConflicts = <T>(write: () => Promise<T>): Promise<T> =>
  retryOnConflict(write, (err) => err instanceof TransactionConflictError);

/**
 * Commits a conditioned write whose failed condition is an answer (already there, taken by another, moved on):
 * true when it committed, false when its condition failed; a transaction conflict makes it again
 * (retryTransactionConflicts), never reads as that answer.
 */
export async function committedUnlessConditionFails(write: () => WriteTx): Promise<boolean> {
  try {
    await retryTransactionConflicts(() => write().commit());
    return true;
  } catch (err) {
    if (conditionFailed(err)) return false;
    throw err;
  }
}

/**
 * One command, the shape every domain write has (docs/architecture.md, "worked example"):
 *  - `ids` (drawn by the command's caller, once) and the clock are fixed before anything else: every attempt (and a replay of the request
 *    under the same Idempotency-Key, whose ids are seeded) writes the same records at the same time. `clock`:
 *    the caller's own (`now`: a worker under an injected clock), or read again on each attempt once its read is
 *    done (`perAttempt`): a worker's or a derived write (a rollup refresh, a refresh run's start or end), whose
 *    stamps must follow the write it lost a race to (a parent's updated_at never moves back; a run starts after
 *    the one it waited for);
 *  - `precheck`: a refusal that must answer before anything is read (e.g. a viewer creating), once;
 *  - `read` the state (again on every attempt; `attempt` counts from 0), `decide` purely on it (a Decision:
 *    its error is answered, nothing written), `write` the decision into one transaction, which the runner
 *    commits; a lost race (ConcurrentUpdateError) runs read-decide-write again within the one budget;
 *  - `stored`: a create whose record an earlier attempt of this request already stored (AlreadyCreatedError
 *    under seeded ids) answers with that record, presented as `write` would have (createdOrStored);
 *  - `recover`: a failed condition of the write that is an answer, not an error (e.g. a repeated request
 *    finding its own claim): what to answer instead, or undefined to let the error through;
 *  - `after`: derived work once the transaction committed (rollups, caches), on the stored record too.
 */
export interface Command<S, W, R, I, O> {
  ids?: I;
  clock?: { now?: () => string; perAttempt?: boolean };
  precheck?: (ids: I) => AppError | undefined | Promise<AppError | undefined>;
  read: (run: CommandRun<I>) => Promise<S>;
  decide: (state: S, now: string, ids: I) => Decision<W>;
  write: (tx: WriteTx, write: W, state: S, run: CommandRun<I>) => R | Promise<R>;
  stored?: StoredAnswer<R>;
  recover?: (err: unknown, state: S) => Promise<R | undefined>;
  after?: (result: R) => O | Promise<O>;
}

/** What every step of one command run shares: its ids, its instant, and which attempt this is (from 0). */
export interface CommandRun<I> {
  ids: I;
  now: string;
  attempt: number;
}

/** How a create answers when its record is already stored (`orStored`). */
export interface StoredAnswer<R> {
  answer(ctx: DataCtx, create: () => Promise<R>): Promise<R>;
}

/** A create of `def`'s record `uuid` (one of the command's ids): already stored by an earlier attempt of the request, it answers `present(stored)`. */
export const orStored = <Rec extends BaseRecord, R>(
  def: EntityDef<Rec>,
  uuid: string,
  present: (stored: Rec) => R | Promise<R>,
): StoredAnswer<R> => ({
  answer: (ctx, create) => createdOrStored(ctx, def, uuid, create, present),
});

/** The clock commands read (one instant per command); a test may fix it. */
export const commandClock = { now: nowIso };

export async function runCommand<S, W, R, I = undefined, O = R>(ctx: DataCtx, c: Command<S, W, R, I, O>): Promise<O> {
  const ids = c.ids as I;
  const clock = c.clock?.now ?? commandClock.now;
  const fixed = c.clock?.perAttempt ? undefined : clock();
  const refusal = await c.precheck?.(ids);
  if (refusal) throw refusal;
  const attempts = () =>
    retryOnConflict(async (n) => {
      const run = { ids, now: fixed ?? clock(), attempt: n };
      const state = await c.read(run);
      // per attempt, the instant follows what the attempt read (a run ended just before is over by then)
      if (fixed === undefined) run.now = clock();
      const decision = c.decide(state, run.now, ids);
      if ('error' in decision) throw decision.error;
      const tx = new WriteTx(ctx);
      const result = await c.write(tx, decision.write, state, run);
      try {
        await tx.commit();
      } catch (err) {
        const recovered = err instanceof ConcurrentUpdateError ? undefined : await c.recover?.(err, state);
        if (recovered === undefined) throw err;
        return recovered;
      }
      return result;
    });
  const result = c.stored ? await c.stored.answer(ctx, attempts) : await attempts();
  return c.after ? c.after(result) : (result as unknown as O);
}

/**
 * Runs a create; when an earlier attempt of the same idempotent request already stored the record
 * (AlreadyCreatedError), answers with the stored record instead, so a retry after a crash applies once.
 */
export async function createdOrStored<R extends BaseRecord, T = R>(
  ctx: DataCtx,
  def: EntityDef<R>,
  uuid: string,
  create: () => Promise<T>,
  present: (stored: R) => T | Promise<T> = (r) => r as unknown as T,
): Promise<T> {
  try {
    return await create();
  } catch (err) {
    if (!(err instanceof AlreadyCreatedError) || err.type !== def.type || err.uuid !== uuid) throw err;
    const stored = await getEntity(ctx, def, uuid, true);
    if (!stored) throw new ConcurrentUpdateError();
    return present(stored.record);
  }
}

/**
 * Optimistic read-modify-write of one entity, as a command (runCommand): reads it (strongly), lets `change`
 * compute the new record (and add related writes to the same transaction), commits conditioned on the version
 * read; a lost race runs it again in the one budget. `change` must be side-effect free apart from `tx`, since it
 * may run more than once; undefined: nothing to write. A missing entity answers `onMissing()`.
 */
export async function mutateEntity<R extends BaseRecord>(
  ctx: DataCtx,
  def: EntityDef<R>,
  id: string,
  change: (current: Stored<R>, tx: WriteTx) => Promise<R | undefined> | R | undefined,
  onMissing: () => AppError,
): Promise<{ before: Stored<R>; after: R }> {
  return runCommand(ctx, {
    read: () => getEntity(ctx, def, id, true),
    decide: (current) => (current ? accept(current) : refuse(onMissing())),
    write: async (tx, current) => {
      const next = await change(current, tx);
      if (next !== undefined) tx.replace(def, current, next);
      return { before: current, after: next ?? current.record };
    },
  });
}
