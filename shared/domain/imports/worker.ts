import { randomUUID } from 'node:crypto';
import { callerTeamUuids } from '#shared/auth/load-caller.ts';
import { nowIso, sleep } from '#shared/clock.ts';
import { mutateEntity, runCommand } from '#shared/command/run.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { accept } from '#shared/decision.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalEntity } from '#shared/domain/goals/entity.ts';
import { refreshRollups } from '#shared/domain/goals/rollup-writes.ts';
import { createGoal } from '#shared/domain/goals/create.ts';
import {
  IMPORT_BATCH,
  IMPORT_QUEUE,
  IMPORT_WORKER_TIMEOUT_SECONDS,
  importEntity,
  importGoalUuid,
  type ImportError,
  type ImportRecord,
} from '#shared/domain/imports/entity.ts';
import { finishImport, LeaseLost, readImportRows } from '#shared/domain/imports/service.ts';
import { validateRows, type PlannedRow, type RowParser } from '#shared/domain/imports/validate.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { AppError, NotFoundError } from '#shared/errors.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import type { Log } from '#shared/logger.ts';
import { queueSender, type QueueSender } from '#shared/queue/queue.ts';

/** The queue message that starts (or resumes) an import (validated by shared/schemas/messages/import.ts). */
export interface ImportMessage {
  tenant_uuid: string;
  import_uuid: string;
}

/** Goals created at once within a batch (rows wait for their parents' rows). */
const CONCURRENCY = 8;

/** Another delivery of the same import is working on it: this one is retried later (and finds it finished). */
export class ImportBusy extends Error {
  constructor() {
    super('The import is being worked on by another delivery');
  }
}

export interface RunImportOpts {
  log: Pick<Log, 'info' | 'warn' | 'error'>;
  /** The queue's last delivery: an unexpected failure then rolls back and ends the import `failed` instead of retrying. */
  lastAttempt?: boolean;
  /** Called after every batch (the command line's progress bar). */
  onProgress?: (r: ImportRecord) => void;
  /** Checks a stored row against the wire shape (`parseImportRow`, beside the import body schema): the domain does not know the wire. */
  parseRow: RowParser;
  /**
   * The tenant's rate limit for the rows (the worker's RateLimiter.takeUpTo): how many of `want` rows the
   * importing user may create now, or none and the ms until one may be. Absent: unmetered (the command line).
   */
  budget?: RowBudget;
  /** Where a paused import's next delivery is sent (default the process's queue sender). */
  queue?: QueueSender;
  /** Epoch ms after which this delivery stops starting batches and hands the rest to a new delivery (its Lambda timeout nears). */
  runUntil?: number;
}

export type RowBudget = (userId: string, want: number) => Promise<{ granted: number; retryAfterMs: number }>;

/** A wait for the rate limit this short is slept in the delivery; a longer one pauses the import (a delayed message). */
export const IMPORT_INLINE_WAIT_MS = 5_000;
/** SQS's longest message delay. */
const MAX_DELAY_SECONDS = 900;

/**
 * The import worker (contract 13): validates every row (nothing is created unless all are valid), then
 * creates the goals in row order, in batches of IMPORT_BATCH with `done` written after each, through
 * createGoal (the usual write rules, as the importing user). A row's goal gets a uuid derived from the
 * import and the row, so:
 *  - a delivery that dies midway is resumed by the next one from `done`, skipping goals already there;
 *  - a failure (a row refused by the write rules, e.g. a time period deleted since validation) removes
 *    every goal the import created (hard delete, children first) and ends it `failed` naming the row.
 * A lease on the import item keeps a duplicate delivery from working on it at the same time. With `budget`, rows
 * are created no faster than the tenant's rate limit allows: a short wait is slept, a longer one (or the end
 * of the delivery's time) pauses the import until a later delivery (pause).
 */
export async function runImport(data: DataCtx, importUuid: string, opts: RunImportOpts): Promise<ImportRecord> {
  const owner = randomUUID();
  const claimed = await claim(data, importUuid, owner);
  if (claimed.state === 'succeeded' || claimed.state === 'failed') return claimed;
  const user = (await getEntity(data, userEntity, claimed.creator_uuid))?.record;
  if (user?.status !== 'active')
    return finishImport(
      data,
      importUuid,
      'failed',
      [{ row: 0, field: 'import', message: 'The importing user is no longer active' }],
      owner,
    );
  const caller = { tenantId: data.tenantId, userId: user.uuid, role: user.role, user };
  let teams: Promise<Set<string>> | undefined;
  const ctx: DomainCtx = {
    ...data,
    caller,
    loader: new Loader(data),
    log: opts.log as Log,
    requestId: `import-${importUuid}`,
    teams: () => (teams ??= callerTeamUuids(data, user.uuid)),
  };

  const rows = await readImportRows(data, importUuid);
  const { errors, plan } = await validateRows(ctx, rows, opts.parseRow);
  if (errors.length) {
    // validating: the file is refused as a whole; importing (a resumed run): rules changed since, undo
    if (claimed.state === 'importing') await rollback(ctx, importUuid, plan, rows.length);
    return finishImport(data, importUuid, 'failed', errors, owner);
  }
  let record = claimed.state === 'validating' ? await progress(data, importUuid, owner, { state: 'importing', done: 0 }) : claimed;
  opts.onProgress?.(record);

  let failure: ImportError | undefined;
  // a previous delivery that died may have created up to a batch of goals past its `done`
  const maybeCreated = claimed.state === 'importing' ? claimed.done + IMPORT_BATCH : 0;
  try {
    for (let start = record.done; start < plan.length && !failure; ) {
      let size = Math.min(IMPORT_BATCH, plan.length - start);
      if (opts.runUntil !== undefined && Date.now() >= opts.runUntil) return pause(data, importUuid, owner, 0, opts);
      if (opts.budget) {
        // Rows cost what the same creates would as requests of the importing user: an import goes no faster
        // than the tenant's (and the user's) limit, and shares it with the user's other traffic.
        const { granted, retryAfterMs } = await opts.budget(user.uuid, size);
        if (granted < 1) {
          if (retryAfterMs > IMPORT_INLINE_WAIT_MS || (opts.runUntil !== undefined && Date.now() + retryAfterMs >= opts.runUntil))
            return pause(data, importUuid, owner, retryAfterMs, opts);
          await sleep(retryAfterMs);
          continue;
        }
        size = Math.min(size, granted);
      }
      const batch = plan.slice(start, start + size);
      const existing =
        start < maybeCreated
          ? new Set(
              (
                await getEntities(
                  ctx,
                  goalEntity,
                  batch.map((r) => importGoalUuid(importUuid, r.index)),
                  true,
                )
              ).keys(),
            )
          : new Set<string>();
      failure = await createBatch(ctx, importUuid, batch, existing);
      if (!failure) {
        start += batch.length;
        record = await progress(data, importUuid, owner, { done: start });
        opts.onProgress?.(record);
      }
    }
  } catch (err) {
    if (err instanceof LeaseLost || !opts.lastAttempt) throw err; // redelivered: resumes from `done`
    opts.log.error('import failed unexpectedly', { import_uuid: importUuid, error: (err as Error).message });
    failure = { row: 0, field: 'import', message: 'The import failed unexpectedly; nothing was kept' };
  }
  if (failure) {
    await rollback(ctx, importUuid, plan, rows.length);
    return finishImport(data, importUuid, 'failed', [failure], owner);
  }
  return finishImport(data, importUuid, 'succeeded', [], owner);
}

/**
 * Stops this delivery without ending the import: gives the lease up, notes when it resumes, and queues its next
 * delivery after `waitMs` (at most SQS's 15 minutes: a longer wait is a delivery that pauses again). Nothing of
 * the tenant's budget or a Lambda is spent meanwhile; a crash before the send leaves this delivery's message to
 * be redelivered, which resumes the import.
 */
async function pause(data: DataCtx, importUuid: string, owner: string, waitMs: number, opts: RunImportOpts): Promise<ImportRecord> {
  const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.ceil(waitMs / 1000));
  const after = await whileLeased(data, importUuid, owner, {
    lease: null,
    resume_at: new Date(Date.now() + delaySeconds * 1000).toISOString(),
  });
  await (opts.queue ?? queueSender()).send(IMPORT_QUEUE, { tenant_uuid: data.tenantId, import_uuid: importUuid } satisfies ImportMessage, {
    delaySeconds,
  });
  opts.log.info('import paused', { import_uuid: importUuid, done: after.done, resume_in_s: delaySeconds });
  return after;
}

/** Takes the import's lease for this delivery (IMPORT_WORKER_TIMEOUT_SECONDS); busy while another delivery holds one. */
async function claim(data: DataCtx, importUuid: string, owner: string): Promise<ImportRecord> {
  const { after } = await mutateEntity(
    data,
    importEntity,
    importUuid,
    (cur) => {
      const r = cur.record;
      if (r.state === 'succeeded' || r.state === 'failed') return undefined;
      if (r.lease && r.lease.until > Date.now()) throw new ImportBusy();
      return { ...r, lease: { owner, until: Date.now() + IMPORT_WORKER_TIMEOUT_SECONDS * 1000 }, resume_at: null, updated_at: nowIso() };
    },
    () => new NotFoundError('Import', importUuid),
  );
  return after;
}

/** Writes progress while this delivery still holds the lease (and extends it). */
async function progress(
  data: DataCtx,
  importUuid: string,
  owner: string,
  change: Partial<Pick<ImportRecord, 'state' | 'done'>>,
): Promise<ImportRecord> {
  return whileLeased(data, importUuid, owner, { ...change, lease: { owner, until: Date.now() + IMPORT_WORKER_TIMEOUT_SECONDS * 1000 } });
}

/** Writes `change` to the import only while this delivery holds its lease (LeaseLost otherwise). */
async function whileLeased(data: DataCtx, importUuid: string, owner: string, change: Partial<ImportRecord>): Promise<ImportRecord> {
  const { after } = await mutateEntity(
    data,
    importEntity,
    importUuid,
    (cur) => {
      if (cur.record.lease?.owner !== owner) throw new LeaseLost();
      return { ...cur.record, ...change, updated_at: nowIso() };
    },
    () => new NotFoundError('Import', importUuid),
  );
  return after;
}

/**
 * Creates one batch, CONCURRENCY goals at a time, each after the rows it names as parents. Returns the
 * first row the write rules refused (the others in flight finish; the caller rolls everything back), or
 * undefined. Anything else (the database failing) throws.
 */
async function createBatch(
  ctx: DomainCtx,
  importUuid: string,
  batch: PlannedRow[],
  existing: Set<string>,
): Promise<ImportError | undefined> {
  const done = new Map<number, Promise<boolean>>();
  let failure: ImportError | undefined;
  let unexpected: unknown;
  const create = async (row: PlannedRow): Promise<boolean> => {
    const parentsOk = await Promise.all(row.parentRows.map((i) => done.get(i) ?? Promise.resolve(true)));
    if (failure || unexpected || parentsOk.includes(false)) return false;
    const uuid = importGoalUuid(importUuid, row.index);
    if (existing.has(uuid)) return true;
    const parents = [...row.parents, ...row.parentRows.map((i) => importGoalUuid(importUuid, i))];
    try {
      await createGoal(ctx, row.kind, { ...row.input, parents }, { uuid });
      return true;
    } catch (err) {
      if (err instanceof AppError && err.status < 500 && err.status !== 409) {
        failure ??= { row: row.index + 1, field: err.details[0]?.field ?? 'row', message: err.message };
      } else unexpected ??= err;
      return false;
    }
  };
  const queue = [...batch];
  const runners = Array.from({ length: Math.min(CONCURRENCY, queue.length) }, async () => {
    for (let row = queue.shift(); row; row = queue.shift()) {
      const p = create(row);
      done.set(row.index, p);
      await p;
    }
  });
  await Promise.all(runners);
  if (unexpected && !failure) throw unexpected;
  return failure;
}

/**
 * Removes every goal the import may have created (rows before `upTo`), newest first, with their index
 * entries; then brings the rollups of the existing parents they were placed under back up to date.
 * Labels the import created stay (they may be in use by now).
 */
async function rollback(ctx: DomainCtx, importUuid: string, plan: PlannedRow[], upTo: number): Promise<void> {
  const uuids = Array.from({ length: upTo }, (_, i) => importGoalUuid(importUuid, i)).reverse();
  const queue = [...uuids];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let id = queue.shift(); id; id = queue.shift()) {
        await runCommand(ctx, {
          read: () => getEntity(ctx, goalEntity, id, true),
          decide: (stored) => accept(stored),
          write: (tx, stored) => void (stored && tx.remove(goalEntity, stored)),
        });
      }
    }),
  );
  const outside = [...new Set(plan.flatMap((r) => r.parents))];
  if (outside.length) await refreshRollups(ctx, outside);
  ctx.log.info('import rolled back', { import_uuid: importUuid, goals: uuids.length });
}
