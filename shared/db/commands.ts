import { sleep } from '#shared/clock.ts';
import type { BaseRecord, DataCtx, EntityDef, Stored } from '#shared/db/model.ts';
import { getEntity } from '#shared/db/reads.ts';
import { AlreadyCreatedError, WriteTx } from '#shared/db/write-tx.ts';
import { ConcurrentUpdateError, type AppError } from '#shared/errors.ts';

/**
 * Runs a read-check-write attempt again when its transaction lost an optimistic race. Creates need it because
 * two overlapping transactions on one uniqueness claim can be cancelled as a conflict rather than a failed
 * condition (the retry then sees the claim: 422 taken); deletes because they are conditioned on the version read.
 */
export async function retryOnConflict<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof ConcurrentUpdateError) || n >= 15) throw err;
      // Exponential back-off with full jitter: a burst of writes on one item spreads out instead of colliding in lockstep.
      await sleep(Math.random() * Math.min(400, 10 * 2 ** n));
    }
  }
}

export async function createEntity<R extends BaseRecord>(ctx: DataCtx, def: EntityDef<R>, record: R): Promise<R> {
  return createdOrStored(ctx, def, record.uuid, async () => {
    await new WriteTx(ctx).create(def, record).commit();
    return record;
  });
}

/**
 * Runs a create; when an earlier attempt of the same idempotent request already stored the record
 * (AlreadyCreatedError), answers with the stored record instead, so a retry after a crash applies once.
 */
export async function createdOrStored<R extends BaseRecord, T = R>(ctx: DataCtx, def: EntityDef<R>, uuid: string, create: () => Promise<T>, present: (stored: R) => T | Promise<T> = (r) => r as unknown as T): Promise<T> {
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
 * Optimistic read-modify-write: reads the entity, lets `change` compute the new record (and add related
 * writes to the same transaction), commits conditioned on the version read, and retries on a lost race.
 * `change` must be side-effect free apart from `tx` because it may run more than once.
 */
export async function mutateEntity<R extends BaseRecord>(
  ctx: DataCtx,
  def: EntityDef<R>,
  id: string,
  change: (current: Stored<R>, tx: WriteTx) => Promise<R | undefined> | R | undefined,
  onMissing: () => AppError,
): Promise<{ before: Stored<R>; after: R }> {
  return retryOnConflict(async () => {
    const current = await getEntity(ctx, def, id, true);
    if (!current) throw onMissing();
    const tx = new WriteTx(ctx);
    const next = await change(current, tx);
    if (next === undefined) return { before: current, after: current.record };
    tx.replace(def, current, next);
    await tx.commit();
    return { before: current, after: next };
  });
}
