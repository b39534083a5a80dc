import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities } from '#shared/db/reads.ts';
import { getSide, querySide } from '#shared/db/side-items.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import { IMPORT_MAX_IN_FLIGHT, IMPORT_STALE_SECONDS, importEntity, importSlotKey } from '#shared/domain/imports/entity.ts';
import { AppError, ConcurrentUpdateError } from '#shared/errors.ts';

/** The Retry-After of a refused import: a polling hint, as the slot frees when an import ends. */
export const IMPORT_RETRY_AFTER_SECONDS = 30;

/**
 * The tenant already has IMPORT_MAX_IN_FLIGHT imports queued or running: 429 `rate_limited` (contract section 1,
 * with Retry-After), its detail `imports_in_flight` telling it apart from the request limiter's.
 */
export class ImportsInFlightError extends AppError {
  constructor() {
    const message = `At most ${IMPORT_MAX_IN_FLIGHT} imports of a tenant may be queued or running at once; send this one again when one has finished`;
    super(
      429,
      'rate_limited',
      message,
      [{ field: 'imports', code: 'imports_in_flight', message: `${IMPORT_MAX_IN_FLIGHT} imports of this tenant are queued or running` }],
      {
        'Retry-After': String(IMPORT_RETRY_AFTER_SECONDS),
      },
    );
  }
}

/**
 * Adds the claim of one of the tenant's in-flight slots to `tx` (the transaction creating the import) and
 * returns its number. A slot is free when absent (released with the import's end, releaseSlot), or when the
 * import holding it has ended, is gone, or was not touched for IMPORT_STALE_SECONDS (its worker died for good):
 * the cap is not leaked by a crash. Race-safe: the put is conditioned on the slot being as read, so of two
 * requests taking the last slot one commits and the other's transaction fails (ConcurrentUpdateError: the
 * caller retries and reads the slots again). Throws ImportsInFlightError when none is free.
 */
export async function claimSlot(ctx: DataCtx, tx: WriteTx, importUuid: string): Promise<number> {
  const { PK } = importSlotKey(ctx.tenantId, 0);
  const held = new Map<number, string>();
  for (const item of await querySide(ctx, PK, { consistent: true }))
    held.set(Number(item.SK.slice('slot#'.length)), item.import_uuid as string);
  const slots = Array.from({ length: IMPORT_MAX_IN_FLIGHT }, (_, n) => n);
  const claim = (n: number, holder?: string) => {
    tx.putSide(
      importSlotKey(ctx.tenantId, n),
      { kind: 'import_slot', import_uuid: importUuid },
      { if: holder ? { equals: { import_uuid: holder } } : { exists: false }, onFail: () => new ConcurrentUpdateError() },
    );
    return n;
  };
  const free = slots.find((n) => !held.has(n));
  if (free !== undefined) return claim(free);
  const holders = await getEntities(ctx, importEntity, held.values(), true);
  const staleBefore = new Date(Date.now() - IMPORT_STALE_SECONDS * 1000).toISOString();
  const done = slots.find((n) => {
    const r = holders.get(held.get(n)!)?.record;
    return !r || r.state === 'succeeded' || r.state === 'failed' || r.updated_at < staleBefore;
  });
  if (done === undefined) throw new ImportsInFlightError();
  return claim(done, held.get(done));
}

/**
 * Adds the release of the import's slot to `tx` (the transaction storing the import's end), so an ended import
 * never holds a slot: the slot is read first and left alone when another import holds it by now (taken as
 * stale). Should that change before the commit, the delete's condition fails and the command runs again.
 */
export async function releaseSlot(ctx: DataCtx, tx: WriteTx, importUuid: string, n: number): Promise<void> {
  const key = importSlotKey(ctx.tenantId, n);
  if ((await getSide(ctx, key))?.import_uuid !== importUuid) return;
  tx.deleteSide(key, { if: { equals: { import_uuid: importUuid } }, onFail: () => new ConcurrentUpdateError() });
}
