import type { BaseRecord, EntityDef } from '#shared/db/model.ts';
import { getEntity } from '#shared/db/reads.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import type { AppError } from '#shared/errors.ts';

/**
 * An entity service's read by id for GET (PUT, DELETE) /<resource>/{id}, declared once: the record, or the
 * entity's 404 (`notFound`, which its commands refuse with too). Every key is under the caller's tenant, so
 * another tenant's id reads as none. Read through the request's loader (strongly consistent, each record once per
 * request), or `byKey` with getEntity (answered from the request's read-ahead when it holds the key); `mayRead`
 * refuses a caller (403) before anything is read.
 */
export function entityShow<R extends BaseRecord>(
  def: EntityDef<R>,
  notFound: (id: string) => AppError,
  opts: { byKey?: boolean; mayRead?: (ctx: DomainCtx) => void } = {},
): (ctx: DomainCtx, id: string) => Promise<R> {
  return async (ctx, id) => {
    opts.mayRead?.(ctx);
    const record = opts.byKey ? (await getEntity(ctx, def, id))?.record : await ctx.loader.one(def, id);
    if (!record) throw notFound(id);
    return record;
  };
}
