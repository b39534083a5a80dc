import type { BaseRecord, EntityDef } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { WriteTx } from '#shared/db/write-tx.ts';

/** Stores `record` as it is, with its entries and claims: a test's setup of state no API request makes (commands go through runCommand). */
export async function createEntity<R extends BaseRecord>(ctx: DataCtx, def: EntityDef<R>, record: R): Promise<R> {
  await new WriteTx(ctx).create(def, record).commit();
  return record;
}
