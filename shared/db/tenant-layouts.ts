import { partitionEntries } from '#shared/db/index-queries.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getSide, type SideItem, type SideKey } from '#shared/db/side-items.ts';
import { WriteTx } from '#shared/db/write-tx.ts';

/**
 * A tenant's layout move (a storage layout changed: goals keep their children's links, check-ins in fewer list
 * shards): until the tenant's marker says every record moved (written with a new tenant, or by the move's
 * admin command), readers read the old layout too. A layout only ever moves forward, so a container that saw
 * the marker once knows it from then on; a marker read stale only makes a reader read the old layout.
 */
export interface LayoutMove {
  /** This container has seen the tenant marked (no read). */
  known(tenantId: string): boolean;
  /** Whether the tenant is marked: known, or read (eventually consistent) and remembered when it is. */
  marked(ctx: DataCtx): Promise<boolean>;
  /** Marks the tenant moved, as part of `tx`. */
  mark(tx: WriteTx, tenantId: string, at: string): WriteTx;
  /**
   * Writes every record listed in `partitions` again through `move` (true when it wrote), `concurrency` at a
   * time sharing one key walk, then marks the tenant unless a strongly consistent read finds it marked.
   */
  moveAll(
    ctx: DataCtx,
    partitions: string[],
    move: (id: string) => Promise<boolean>,
    opts: { concurrency?: number; at: string },
  ): Promise<{ seen: number; moved: number }>;
}

/** Tenants remembered per layout at most (a container serving more forgets them all and reads the markers again). */
const MAX_KNOWN = 10_000;

export function layoutMove(spec: {
  key: (tenantId: string) => SideKey;
  item: (at: string) => SideItem;
  holds?: (found: SideItem) => boolean;
}): LayoutMove {
  const known = new Set<string>();
  const holds = (found: SideItem | undefined) => !!found && (spec.holds?.(found) ?? true);
  const remember = (tenantId: string) => {
    if (known.size >= MAX_KNOWN) known.clear();
    known.add(tenantId);
  };
  const mark = (tx: WriteTx, tenantId: string, at: string) => tx.putSide(spec.key(tenantId), spec.item(at));
  return {
    known: (tenantId) => known.has(tenantId),
    async marked(ctx) {
      if (known.has(ctx.tenantId)) return true;
      if (!holds(await getSide(ctx, spec.key(ctx.tenantId), false))) return false;
      remember(ctx.tenantId);
      return true;
    },
    mark,
    async moveAll(ctx, partitions, move, { concurrency = 4, at }) {
      const workers = Math.max(1, Math.min(concurrency, 64));
      let seen = 0;
      let moved = 0;
      for (const partition of partitions) {
        const ids = partitionEntries(ctx, partition);
        await Promise.all(
          Array.from({ length: workers }, async () => {
            // the workers share one key walk: each takes the next id when it is free
            for (let r = await ids.next(); !r.done; r = await ids.next()) {
              seen += 1;
              if (await move(r.value.id)) moved += 1;
            }
          }),
        );
      }
      // marked already (a run before, or a new tenant): nothing to write
      if (!holds(await getSide(ctx, spec.key(ctx.tenantId)))) await mark(new WriteTx(ctx), ctx.tenantId, at).commit();
      return { seen, moved };
    },
  };
}
