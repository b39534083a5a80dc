import { createHash } from 'node:crypto';
import { keys } from '#shared/db/keys.ts';
import type { BaseRecord, EntityDef } from '#shared/db/model.ts';

export const IMPORT_QUEUE = 'goal-imports';
export const IMPORT_MAX_ROWS = 10_000;
/** Media types an import body may have: the route row's `accepts` and what its handler hands the transport. */
export const IMPORT_MEDIA_TYPES: ['application/json', 'text/csv'] = ['application/json', 'text/csv'];
/** Receives of one import message before it is dead-lettered; the last one ends the import `failed`. */
export const IMPORT_MAX_RECEIVES = 5;
/** The worker's Lambda timeout; a lease held this long by a delivery keeps a duplicate delivery out. */
export const IMPORT_WORKER_TIMEOUT_SECONDS = 900;
/** Imports of one tenant queued or running at once; another is refused (429) until one ends (shared/domain/imports/slots.ts). */
export const IMPORT_MAX_IN_FLIGHT = 2;
/**
 * An import not touched (claimed, progressed, paused) for this long is presumed dead and its in-flight slot may
 * be taken: twice the queue's visibility timeout (6x the worker timeout), so a live import waiting for its
 * redelivery after a crashed delivery keeps its slot.
 */
export const IMPORT_STALE_SECONDS = 12 * IMPORT_WORKER_TIMEOUT_SECONDS;
/** Import worker invocations at once, across tenants (the event source's maximum concurrency). */
export const IMPORT_WORKER_CONCURRENCY = 5;
/** Rows created between two progress writes (`done`). */
export const IMPORT_BATCH = 100;
/** Errors kept on the import item itself (lists show these); every error is in the import's error chunks. */
export const IMPORT_ITEM_ERRORS = 100;

export const IMPORT_STATES = ['validating', 'importing', 'succeeded', 'failed'] as const;
export type ImportState = (typeof IMPORT_STATES)[number];

export interface ImportError {
  /** 1-based: the row's position in `goals`, or the data row of a CSV file (the header row not counted). */
  row: number;
  field: string;
  message: string;
}

export interface ImportRecord extends BaseRecord {
  state: ImportState;
  total: number;
  done: number;
  creator_uuid: string;
  /** The first IMPORT_ITEM_ERRORS errors; `error_count` counts them all. */
  errors: ImportError[];
  error_count: number;
  /** Rows are stored in this many chunk items beside the import item. */
  chunks: number;
  finished_at: string | null;
  /** The delivery working on the import, so a duplicate delivery of the queue message waits instead of racing it. */
  lease: { owner: string; until: number } | null;
  /** The tenant's in-flight slot the import holds (absent on imports stored before the cap). */
  slot?: number;
  /** Set while the import waits for the tenant's rate limit to refill: when its next delivery is due. */
  resume_at?: string | null;
}

/** One of the tenant's IMPORT_MAX_IN_FLIGHT slots (`T#t#import_slots#tenant`, SK `slot#<n>`), naming the import holding it. */
export const importSlotKey = (tenantId: string, n: number) => keys.misc(tenantId, 'import_slots', 'tenant', `slot#${n}`);

/** Imports are listed in creation order; a member sees its own, an admin every import of the tenant. */
export const importEntity: EntityDef<ImportRecord> = {
  type: 'import',
  envelope: (r) => ({ vis: 'limited', acl: [`u:${r.creator_uuid}`] }),
};

/**
 * The import's rows (as sent) and, once validated, its errors, in chunk items of the import's own
 * partition (`T#t#import#<id>`, SK `rows#<n>` / `errors#<n>`): 10,000 rows do not fit one 400 KB item.
 */
export const importChunkKey = (tenantId: string, importUuid: string, part: 'rows' | 'errors', n: number) =>
  keys.misc(tenantId, 'import', importUuid, `${part}#${String(n).padStart(5, '0')}`);

/**
 * The uuid the goal of row `index` gets: derived from the import and the row, so a retried or resumed
 * import finds what it already created, and a rollback knows every goal it may have to remove.
 */
export function importGoalUuid(importUuid: string, index: number): string {
  const h = createHash('sha256').update(`goal-import:${importUuid}:${index}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
