import { isAdmin } from '#shared/auth/caller.ts';
import { newId } from '#shared/ids.ts';
import type { Checks } from '#shared/auth/permissions.ts';
import { requireContentWriter } from '#shared/auth/permissions.ts';
import { nowIso } from '#shared/clock.ts';
import { mutateEntity, runCommand } from '#shared/command/run.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { querySidePage } from '#shared/db/side-items.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { accept } from '#shared/decision.ts';
import {
  IMPORT_ITEM_ERRORS,
  IMPORT_QUEUE,
  importChunkKey,
  importEntity,
  importGoalUuid,
  type ImportError,
  type ImportRecord,
} from '#shared/domain/imports/entity.ts';
import { claimSlot, releaseSlot } from '#shared/domain/imports/slots.ts';
import { ForbiddenError, NotFoundError } from '#shared/errors.ts';
import { runList, type ListResult } from '#shared/list/engine.ts';
import { uuidAttr, type ListResource } from '#shared/list/resource.ts';
import { queueSender, type QueueSender } from '#shared/queue/queue.ts';

/** Rows are stored in chunk items of at most this many bytes of JSON (DynamoDB items hold 400 KB). */
const CHUNK_BYTES = 300_000;

export interface ImportMessage {
  tenant_uuid: string;
  import_uuid: string;
}

/**
 * POST /rest/v2/imports: stores the rows as sent (state `validating`) and queues the import; the worker
 * validates every row, then creates the goals (contract 13). Members and admins import; viewers are 403.
 * A tenant has at most IMPORT_MAX_IN_FLIGHT imports queued or running: another is 429 (slots.ts).
 * A message that cannot be queued ends the import `failed` (and the request 500), never stuck `validating`.
 */
export async function startImport(ctx: DomainCtx, rows: unknown[], queue: QueueSender = queueSender()): Promise<ImportRecord> {
  requireContentWriter(ctx.caller);
  const now = nowIso();
  const chunks = chunkRows(rows);
  const base: ImportRecord = {
    uuid: newId(),
    state: 'validating',
    total: rows.length,
    done: 0,
    creator_uuid: ctx.caller.userId,
    errors: [],
    error_count: 0,
    chunks: chunks.length,
    finished_at: null,
    lease: null,
    created_at: now,
    updated_at: now,
  };
  // the import, its rows and one of the tenant's in-flight slots in one transaction: no slot without its import
  const record = await runCommand(ctx, {
    read: async () => undefined,
    decide: () => accept(base), // what refuses an import is the precheck above, and the slot's claim (429) below
    write: async (tx, b) => {
      const r: ImportRecord = { ...b, slot: await claimSlot(ctx, tx, b.uuid) };
      tx.create(importEntity, r);
      chunks.forEach((c, n) => tx.putSide(importChunkKey(ctx.tenantId, r.uuid, 'rows', n), { kind: 'import_rows', rows: c }));
      return r;
    },
  });
  try {
    await queue.send(IMPORT_QUEUE, { tenant_uuid: ctx.tenantId, import_uuid: record.uuid } satisfies ImportMessage);
  } catch (err) {
    await finishImport(ctx, record.uuid, 'failed', [{ row: 0, field: 'import', message: 'The import could not be queued; send it again' }]);
    throw err;
  }
  return record;
}

/** The rows as JSON text, split so each chunk item stays well under DynamoDB's 400 KB. */
function chunkRows(rows: unknown[]): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let size = 2;
  for (const r of rows) {
    const text = JSON.stringify(r) ?? 'null';
    if (current.length && size + text.length + 1 > CHUNK_BYTES) {
      chunks.push(`[${current.join(',')}]`);
      current = [];
      size = 2;
    }
    current.push(text);
    size += Buffer.byteLength(text) + 1;
  }
  chunks.push(`[${current.join(',')}]`);
  return chunks;
}

/** Every chunk of one part of an import, in order (one consistent Query, following pages). */
async function readChunks(ctx: DataCtx, importUuid: string, part: 'rows' | 'errors'): Promise<Array<Record<string, unknown>>> {
  const { PK } = importChunkKey(ctx.tenantId, importUuid, part, 0);
  const items: Array<Record<string, unknown>> = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await querySidePage(ctx, PK, { prefix: `${part}#`, consistent: true, startKey });
    items.push(...page.items);
    startKey = page.lastKey;
  } while (startKey);
  return items;
}

export async function readImportRows(ctx: DataCtx, importUuid: string): Promise<unknown[]> {
  return (await readChunks(ctx, importUuid, 'rows')).flatMap((i) => JSON.parse(i.rows as string) as unknown[]);
}

/** Stores every error (chunks) and ends the import; the import item keeps the first IMPORT_ITEM_ERRORS. */
export async function finishImport(
  ctx: DataCtx,
  importUuid: string,
  state: 'succeeded' | 'failed',
  errors: ImportError[] = [],
  leaseOwner?: string,
): Promise<ImportRecord> {
  const now = nowIso();
  const { after } = await mutateEntity(
    ctx,
    importEntity,
    importUuid,
    async (cur, tx) => {
      const r = cur.record;
      if (r.state === 'succeeded' || r.state === 'failed') return undefined;
      if (leaseOwner && r.lease?.owner !== leaseOwner) throw new LeaseLost();
      if (r.slot !== undefined) await releaseSlot(ctx, tx, importUuid, r.slot);
      if (errors.length > IMPORT_ITEM_ERRORS) {
        for (let n = 0, i = 0; i < errors.length; n++, i += 2000) {
          tx.putSide(importChunkKey(ctx.tenantId, importUuid, 'errors', n), {
            kind: 'import_errors',
            errors: JSON.stringify(errors.slice(i, i + 2000)),
          });
        }
      }
      return {
        ...r,
        state,
        done: state === 'succeeded' ? r.total : r.done,
        errors: errors.slice(0, IMPORT_ITEM_ERRORS),
        error_count: errors.length,
        finished_at: now,
        lease: null,
        resume_at: null,
        updated_at: now,
      };
    },
    () => new NotFoundError('Import', importUuid),
  );
  return after;
}

/** The delivery working on an import lost its lease (a duplicate delivery took over after it expired). */
export class LeaseLost extends Error {
  constructor() {
    super('Another delivery holds this import');
  }
}

// ---------- reads ----------

/** Admins see every import of the tenant; others their own (another's is 403, another tenant's 404). */
const canSee = (ctx: DomainCtx, r: ImportRecord) => isAdmin(ctx.caller) || r.creator_uuid === ctx.caller.userId;

export async function getImport(ctx: DomainCtx, id: string): Promise<ImportRecord> {
  const stored = await getEntity(ctx, importEntity, id, true);
  if (!stored) throw new NotFoundError('Import', id);
  if (!canSee(ctx, stored.record)) throw new ForbiddenError('Only its creator and admins can see this import');
  return stored.record;
}

/** What GET /imports/{id} adds to the stored import: every error and, once succeeded, `created` (ref → goal uuid). */
export interface ImportOutcome {
  errors: ImportError[];
  created: Record<string, string> | null;
}

/** The import's whole outcome: errors beyond the record's first ones are read from their chunks, `created` from the rows. */
export async function importOutcome(ctx: DataCtx, r: ImportRecord): Promise<ImportOutcome> {
  const errors =
    r.error_count > r.errors.length
      ? (await readChunks(ctx, r.uuid, 'errors')).flatMap((i) => JSON.parse(i.errors as string) as ImportError[])
      : r.errors;
  let created: Record<string, string> | null = null;
  if (r.state === 'succeeded') {
    const rows = await readImportRows(ctx, r.uuid);
    created = Object.fromEntries(rows.map((row, i) => [String((row as { ref?: unknown }).ref).trim(), importGoalUuid(r.uuid, i)]));
  }
  return { errors, created };
}

export const importChecks = (ctx: DomainCtx): Checks => ({ can_create: ctx.caller.role !== 'viewer' });

const importList: ListResource<ImportRecord> = {
  type: 'import',
  entity: importEntity,
  lists: [importEntity.type],
  attributes: {
    uuid: uuidAttr(),
    state: { type: 'string', get: (r) => r.state },
    creator_uuid: { type: 'string', get: (r) => r.creator_uuid },
    created_at: { type: 'timestamp', get: (r) => r.created_at },
  },
};

/** GET /rest/v2/imports: the caller's imports (every import of the tenant for admins), oldest first, paginated and filterable. */
export async function listImports(ctx: DomainCtx, pairs: Array<[string, string]>): Promise<ListResult<ImportRecord>> {
  const me = `u:${ctx.caller.userId}`;
  return runList(importList, { ctx, loader: ctx.loader, pairs, entryFilter: (e) => isAdmin(ctx.caller) || (e.acl ?? []).includes(me) });
}
