import type { BaseRecord, DataCtx, EntityDef } from '#shared/db/model.ts';
import { getEntities } from '#shared/db/reads.ts';

/** Per-request cache of entities by id, so association filters and presenters read each item at most once. */
export class Loader {
  private cache = new Map<string, BaseRecord | null>();

  /** `consistent`: strongly consistent reads, for a write's own read plan (a request-wide cache is eventually consistent). */
  constructor(
    readonly ctx: DataCtx,
    private readonly consistent = false,
  ) {}

  prime<R extends BaseRecord>(def: EntityDef<R>, record: R): void {
    this.cache.set(`${def.type}#${record.uuid}`, record);
  }

  async many<R extends BaseRecord>(def: EntityDef<R>, ids: Iterable<string>): Promise<R[]> {
    const list = [...ids];
    const missing = list.filter((id) => !this.cache.has(`${def.type}#${id}`));
    if (missing.length) {
      const found = await getEntities(this.ctx, def, missing, this.consistent);
      for (const id of missing) this.cache.set(`${def.type}#${id}`, found.get(id)?.record ?? null);
    }
    return list.map((id) => this.cache.get(`${def.type}#${id}`)).filter((r): r is R => !!r) as R[];
  }

  async one<R extends BaseRecord>(def: EntityDef<R>, id: string | null | undefined): Promise<R | undefined> {
    if (!id) return undefined;
    return (await this.many(def, [id]))[0];
  }
}
