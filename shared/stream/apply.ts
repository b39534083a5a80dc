import type { Projection, ProjectionCtx, TableChange } from '#shared/stream/projection.ts';

/**
 * Routes one committed change to every projection that accepts it, one after another. A projection that
 * throws fails the whole change (the processor reports it as a batch item failure, so the change is delivered
 * again and every projection sees it again): projections are idempotent, so the ones that already applied it
 * converge to the same state on the second delivery.
 */
export async function applyChange(change: TableChange, projections: readonly Projection[], ctx: ProjectionCtx): Promise<string[]> {
  const applied: string[] = [];
  for (const p of projections) {
    if (!p.accepts(change)) continue;
    try {
      await p.apply(change, ctx);
    } catch (err) {
      ctx.log.error('projection failed', { projection: p.name, event_id: change.eventId, pk: change.keys.PK, sk: change.keys.SK, error: (err as Error).message });
      throw err;
    }
    applied.push(p.name);
  }
  return applied;
}
