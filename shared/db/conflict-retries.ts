/**
 * The store's answer to a lost optimistic race: one retry budget for every write that may lose one (the command
 * runner, shared/command/run.ts, retries through it), and a conditioned write whose failed condition is an answer.
 */
import { sleep } from '#shared/clock.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import { conditionFailed, ConcurrentUpdateError, TransactionConflictError } from '#shared/errors.ts';

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
 * because they are conditioned on the version read. Commands use runCommand (shared/command/run.ts), which retries through this.
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
