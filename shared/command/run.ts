import { nowIso } from '#shared/clock.ts';
import { retryOnConflict } from '#shared/db/conflict-retries.ts';
import type { BaseRecord, EntityDef, Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { AlreadyCreatedError } from '#shared/db/tx-errors.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { accept, refuse, type Decision } from '#shared/decision.ts';
import { ConcurrentUpdateError, type AppError } from '#shared/errors.ts';

/**
 * One command, the shape every domain write has (the decider pattern; docs/architecture.md "Commands", and the
 * walk of a check-in there). The runner sits above the store: it reads through the command's read step, asks its
 * pure decision, and commits what `write` mapped the decision to.
 *  - `ids` (drawn by the command's caller, once) and the clock are fixed before anything else: every attempt (and a replay of the request
 *    under the same Idempotency-Key, whose ids are seeded) writes the same records at the same time. `clock`:
 *    the caller's own (`now`: a worker under an injected clock), or read again on each attempt once its read is
 *    done (`perAttempt`): a worker's or a derived write (a rollup refresh, a refresh run's start or end), whose
 *    stamps must follow the write it lost a race to (a parent's updated_at never moves back; a run starts after
 *    the one it waited for);
 *  - `precheck`: a refusal that must answer before anything is read (e.g. a viewer creating), once;
 *  - `read` everything the command needs, typed per command (again on every attempt; `attempt` counts from 0);
 *    `first`: the first attempt's read when the caller started it already (beside the caller's own read: a
 *    check-in's goal), so the first attempt costs no round trip more than the read itself;
 *  - `decide` purely on it (a Decision: its error is answered, nothing written): everything the command writes,
 *    derived values included (a check-in's rollup ancestors);
 *  - `write` maps the decision into the runner's transaction; a decision too large for one transaction maps into
 *    a plan of several (`run.part()` starts the next; the runner commits them in order, so a later part lost to
 *    a race is resumed by the next attempt, which reads what the earlier parts committed); a lost race
 *    (ConcurrentUpdateError) runs read-decide-write again within the one budget;
 *  - `stored`: a create whose record an earlier attempt of this request already stored (AlreadyCreatedError
 *    under seeded ids) answers with that record, presented as `write` would have (createdOrStored);
 *  - `recover`: a failed condition of the write that is an answer, not an error (e.g. a repeated request
 *    finding its own claim): what to answer instead, or undefined to let the error through;
 *  - `after`: work once the transaction committed (caches, signals; for the few writes that cannot move their
 *    rollup ancestors in their own transaction, the recompute), on the stored record too.
 */
export interface Command<S, W, R, I, O> {
  ids?: I;
  clock?: { now?: () => string; perAttempt?: boolean };
  precheck?: (ids: I) => AppError | undefined | Promise<AppError | undefined>;
  first?: Promise<S>;
  read: (run: CommandRun<I>) => Promise<S>;
  decide: (state: S, now: string, ids: I) => Decision<W>;
  write: (tx: WriteTx, write: W, state: S, run: WriteRun<I>) => R | Promise<R>;
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

/** The write step's run: `part()` starts the next transaction of a plan of several (committed in order after the ones before). */
export interface WriteRun<I> extends CommandRun<I> {
  part(): WriteTx;
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
  c.first?.catch(() => undefined); // awaited by the first attempt; a precheck's refusal leaves it unread
  const refusal = await c.precheck?.(ids);
  if (refusal) throw refusal;
  const attempts = () =>
    retryOnConflict(async (n) => {
      const run = { ids, now: fixed ?? clock(), attempt: n };
      const state = await (n === 0 && c.first ? c.first : c.read(run));
      // per attempt, the instant follows what the attempt read (a run ended just before is over by then)
      if (fixed === undefined) run.now = clock();
      const decision = c.decide(state, run.now, ids);
      if ('error' in decision) throw decision.error;
      const parts = [new WriteTx(ctx)];
      const result = await c.write(parts[0]!, decision.write, state, {
        ...run,
        part: () => {
          parts.push(new WriteTx(ctx));
          return parts.at(-1)!;
        },
      });
      try {
        for (const tx of parts) await tx.commit();
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
