import { commitStep } from '#shared/stream/commit.ts';
import { stepOf, type Projection, type ProjectionCtx } from '#shared/stream/projection.ts';
import type { TableChange } from '#shared/table-change.ts';

/**
 * Routes one committed change to every projection that accepts it, at once (each run by the one committer,
 * commit.ts), except that a projection naming others in `after` waits for them (a check-in's goal settles its
 * current values before its ancestors are recomputed from it). A projection that throws fails the whole change (the processor reports it as a batch
 * item failure, so the change is delivered again and every projection sees it again): projections are
 * idempotent, so the ones that already applied it converge to the same state on the second delivery.
 */
export async function applyChange(change: TableChange, projections: readonly Projection[], ctx: ProjectionCtx): Promise<string[]> {
  const running = new Map<string, Promise<void>>();
  for (const p of projections) {
    if (!p.accepts(change)) continue;
    const first = (p.after ?? []).flatMap((name) => running.get(name) ?? []);
    running.set(
      p.name,
      Promise.all(first).then(async () => {
        try {
          await commitStep(ctx.data, stepOf(p, change), ctx.log);
        } catch (err) {
          ctx.log.error('projection failed', {
            projection: p.name,
            event_id: change.eventId,
            pk: change.keys.PK,
            sk: change.keys.SK,
            error: (err as Error).message,
          });
          throw err;
        }
      }),
    );
  }
  const outcomes = await Promise.allSettled(running.values());
  const failed = outcomes.find((o) => o.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return [...running.keys()];
}
