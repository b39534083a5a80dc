import { randomUUID } from 'node:crypto';
import { callerTeamUuids } from '#shared/auth/caller.ts';
import { getEntities, getEntity, mutateEntity, nowIso, retryOnConflict, WriteTx, type DataCtx } from '#shared/db/store.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalEntity } from '#shared/domain/goals/entity.ts';
import { refreshRollups } from '#shared/domain/goals/progress.ts';
import { createGoal } from '#shared/domain/goals/create.ts';
import { IMPORT_BATCH, IMPORT_WORKER_TIMEOUT_SECONDS, importEntity, importGoalUuid, type ImportError, type ImportRecord } from '#shared/domain/imports/entity.ts';
import { finishImport, LeaseLost, readImportRows } from '#shared/domain/imports/service.ts';
import { validateRows, type PlannedRow, type RowParser } from '#shared/domain/imports/validate.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { AppError, NotFoundError } from '#shared/errors.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import type { Log } from '#shared/logger.ts';

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
}

/**
 * The import worker (contract 13): validates every row (nothing is created unless all are valid), then
 * creates the goals in row order, in batches of IMPORT_BATCH with `done` written after each, through
 * createGoal (the usual write rules, as the importing user). A row's goal gets a uuid derived from the
 * import and the row, so:
 *  - a delivery that dies midway is resumed by the next one from `done`, skipping goals already there;
 *  - a failure (a row refused by the write rules, e.g. a time period deleted since validation) removes
 *    every goal the import created (hard delete, children first) and ends it `failed` naming the row.
 * A lease on the import item keeps a duplicate delivery from working on it at the same time.
 */
export async function runImport(data: DataCtx, importUuid: string, opts: RunImportOpts): Promise<ImportRecord> {
  const owner = randomUUID();
  const claimed = await claim(data, importUuid, owner);
  if (claimed.state === 'succeeded' || claimed.state === 'failed') return claimed;
  const user = (await getEntity(data, userEntity, claimed.creator_uuid))?.record;
  if (!user || user.status !== 'active') return finishImport(data, importUuid, 'failed', [{ row: 0, field: 'import', message: 'The importing user is no longer active' }], owner);
  const caller = { tenantId: data.tenantId, userId: user.uuid, role: user.role, user };
  let teams: Promise<Set<string>> | undefined;
  const ctx: DomainCtx = { ...data, caller, loader: new Loader(data), log: opts.log as Log, requestId: `import-${importUuid}`, teams: () => (teams ??= callerTeamUuids(data, user.uuid)) };

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
  try {
    for (let start = record.done; start < plan.length && !failure; start += IMPORT_BATCH) {
      const batch = plan.slice(start, start + IMPORT_BATCH);
      // the first batch of a resumed run may hold goals the previous delivery created before it died
      const existing = start === claimed.done && claimed.state === 'importing' ? new Set((await getEntities(ctx, goalEntity, batch.map((r) => importGoalUuid(importUuid, r.index)), true)).keys()) : new Set<string>();
      failure = await createBatch(ctx, importUuid, batch, existing);
      if (!failure) {
        record = await progress(data, importUuid, owner, { done: start + batch.length });
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
      return { ...r, lease: { owner, until: Date.now() + IMPORT_WORKER_TIMEOUT_SECONDS * 1000 }, updated_at: nowIso() };
    },
    () => new NotFoundError('Import', importUuid),
  );
  return after;
}

/** Writes progress while this delivery still holds the lease (and extends it). */
async function progress(data: DataCtx, importUuid: string, owner: string, change: Partial<Pick<ImportRecord, 'state' | 'done'>>): Promise<ImportRecord> {
  const { after } = await mutateEntity(
    data,
    importEntity,
    importUuid,
    (cur) => {
      if (cur.record.lease?.owner !== owner) throw new LeaseLost();
      return { ...cur.record, ...change, lease: { owner, until: Date.now() + IMPORT_WORKER_TIMEOUT_SECONDS * 1000 }, updated_at: nowIso() };
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
async function createBatch(ctx: DomainCtx, importUuid: string, batch: PlannedRow[], existing: Set<string>): Promise<ImportError | undefined> {
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
        await retryOnConflict(async () => {
          const stored = await getEntity(ctx, goalEntity, id, true);
          if (stored) await new WriteTx(ctx).remove(goalEntity, stored).commit();
        });
      }
    }),
  );
  const outside = [...new Set(plan.flatMap((r) => r.parents))];
  if (outside.length) await refreshRollups(ctx, outside);
  ctx.log.info('import rolled back', { import_uuid: importUuid, goals: uuids.length });
}
