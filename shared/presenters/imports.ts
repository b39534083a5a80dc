/** Import presentation, above the domain: the import record, typed by its response schema. */
import type { z } from 'zod';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import type { ImportRecord } from '#shared/domain/imports/entity.ts';
import { importOutcome, type ImportOutcome } from '#shared/domain/imports/service.ts';
import type { ImportRecordSchema } from '#shared/schemas/imports.ts';

type Wire<S extends z.ZodType> = z.infer<S>;

/**
 * `data.record` of an import. In lists (no extra reads per import) `errors` holds at most the first
 * IMPORT_ITEM_ERRORS errors and `created` is null: GET the import (presentImportInFull) for all of them.
 */
export function presentImport(
  r: ImportRecord,
  outcome: ImportOutcome = { errors: r.errors, created: null },
): Wire<typeof ImportRecordSchema> {
  return {
    uuid: r.uuid,
    state: r.state,
    total: r.total,
    done: r.done,
    errors: outcome.errors,
    error_count: r.error_count,
    created: outcome.created,
    creator_uuid: r.creator_uuid,
    created_at: r.created_at,
    finished_at: r.finished_at,
  };
}

/** The import as GET /imports/{id} (and the command line) shows it: with every error and, once succeeded, `created`. */
export async function presentImportInFull(ctx: DataCtx, r: ImportRecord): Promise<Wire<typeof ImportRecordSchema>> {
  return presentImport(r, await importOutcome(ctx, r));
}
