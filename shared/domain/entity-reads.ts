import type { BaseRecord, EntityDef } from '#shared/db/model.ts';
import { getEntity } from '#shared/db/reads.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import type { AppError } from '#shared/errors.ts';

/** An entity's reads by id, as its service answers them. */
export interface EntityReads<R> {
  /** The record, or undefined: for a caller that decides its own error (a goal naming an unknown label). */
  get(ctx: DomainCtx, id: string): Promise<R | undefined>;
  /** The record, or the entity's 404: GET (PUT, DELETE) /<resource>/{id} of an id the caller's tenant does not hold. */
  show(ctx: DomainCtx, id: string): Promise<R>;
}

/**
 * The get / show / 404 of an entity service, declared once: `notFound` is the entity's 404 (its commands refuse
 * with it too). Every key is under the caller's tenant, so another tenant's id reads as none. Read through the
 * request's loader (strongly consistent, each record once per request), or `byKey` with getEntity (answered
 * from the request's read-ahead when it holds the key); `mayRead` refuses a caller before anything is read.
 */
export function entityReads<R extends BaseRecord>(
  def: EntityDef<R>,
  notFound: (id: string) => AppError,
  opts: { byKey?: boolean; mayRead?: (ctx: DomainCtx) => void } = {},
): EntityReads<R> {
  const read = opts.byKey
    ? async (ctx: DomainCtx, id: string) => (await getEntity(ctx, def, id))?.record
    : (ctx: DomainCtx, id: string) => ctx.loader.one(def, id);
  const get = (ctx: DomainCtx, id: string) => {
    opts.mayRead?.(ctx);
    return read(ctx, id);
  };
  return {
    get,
    async show(ctx, id) {
      const record = await get(ctx, id);
      if (!record) throw notFound(id);
      return record;
    },
  };
}
