import type { BaseRecord, EntityDef } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities } from '#shared/db/reads.ts';

/** Per-request cache of entities by id, so association filters and presenters read each item at most once. */
export class Loader {
  private cache = new Map<string, BaseRecord | null>();

  /** Strongly consistent reads, as every read by key (contract section 14: a write naming a record just created finds it). */
  constructor(readonly ctx: DataCtx) {}

  prime<R extends BaseRecord>(def: EntityDef<R>, record: R): void {
    this.cache.set(`${def.type}#${record.uuid}`, record);
  }

  /**
   * `listing`: a list page's own records, read eventually consistent (half the read units; a list may lag a
   * write by up to 2 s anyway, contract section 14). Every other read by id is strongly consistent.
   */
  async many<R extends BaseRecord>(def: EntityDef<R>, ids: Iterable<string>, opts: { listing?: boolean } = {}): Promise<R[]> {
    const list = [...ids];
    const missing = list.filter((id) => !this.cache.has(`${def.type}#${id}`));
    if (missing.length) {
      const found = await getEntities(this.ctx, def, missing, !opts.listing);
      for (const id of missing) this.cache.set(`${def.type}#${id}`, found.get(id)?.record ?? null);
    }
    return list.map((id) => this.cache.get(`${def.type}#${id}`)).filter((r): r is R => !!r) as R[];
  }

  async one<R extends BaseRecord>(def: EntityDef<R>, id: string | null | undefined): Promise<R | undefined> {
    if (!id) return undefined;
    return (await this.many(def, [id]))[0];
  }
}
