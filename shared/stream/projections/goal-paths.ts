import { mutateEntity } from '#shared/command/run.ts';
import type { DataCtx } from '#shared/db/model.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { childEntries } from '#shared/domain/goals/hierarchy.ts';
import { pathUnder } from '#shared/domain/goals/rules.ts';
import { NotFoundError } from '#shared/errors.ts';
import { entityRecord } from '#shared/stream/changes.ts';
import type { Projection } from '#shared/stream/projection.ts';

const firstParent = (g: GoalRecord) => g.parent_links[0]?.parent_uuid;

/** Children rewritten at once: a parent of hundreds of children should not take one write's latency each. */
const CONCURRENCY = 8;

/**
 * Sets the goal's path to the one under `parent` (its first parent as read; undefined for a root), conditioned
 * on the goal's version: a lost race reads it again and decides again; nothing is written when its path is
 * already right or `parent` is no longer its first parent (then its own change brings the right one).
 */
async function setPath(data: DataCtx, id: string, parent: GoalRecord | undefined): Promise<void> {
  await mutateEntity(
    data,
    goalEntity,
    id,
    (cur) => {
      const path = pathUnder(cur.record, parent);
      return path === undefined || path === cur.record.path ? undefined : { ...cur.record, path };
    },
    () => new NotFoundError('Goal', id),
  ).catch((err) => {
    if (!(err instanceof NotFoundError)) throw err; // deleted since: no path to keep
  });
}

/**
 * A goal's `path` (its first-parent uuid chain, goals/rules.ts pathFor) from the change stream. When a goal's
 * path or first parent changed, the goal's own path is checked against its first parent as it is now (an
 * operator's or an import's write may have set a wrong one: it is rewritten, and that change comes back here);
 * then each direct child whose first parent it is gets the path below it. Each child's write is itself a goal
 * change whose path moved, so the stream carries the rewrite down the subtree level by level.
 *
 * The request path rewrites the subtree at once after a re-parenting (read-your-writes, bounded, best effort:
 * goals/update.ts), so this normally finds nothing to do; it repairs what that left (the function died midway,
 * a write failed, a subtree past its bound). Idempotent: it reads the goals as they are now and writes only a
 * path that differs, conditioned on that goal's version; a replayed or older change finds nothing to do.
 */
export const goalPathsProjection: Projection = {
  name: 'goal-paths',
  accepts(change) {
    const before = entityRecord<GoalRecord>(change, 'goal', 'old');
    const after = entityRecord<GoalRecord>(change, 'goal', 'new');
    // a created goal has no children yet and took its path from its parent in its own write; a deleted one
    // leaves its children's paths to their own next move
    return before !== undefined && after !== undefined && (before.path !== after.path || firstParent(before) !== firstParent(after));
  },
  async apply(change, ctx) {
    const uuid = entityRecord<GoalRecord>(change, 'goal', 'new')!.uuid;
    const goal = (await getEntity(ctx.data, goalEntity, uuid, true))?.record;
    if (!goal) return;
    const first = firstParent(goal);
    const parent = first === undefined ? undefined : (await getEntity(ctx.data, goalEntity, first, true))?.record;
    const own = first === undefined || parent ? pathUnder(goal, parent) : undefined;
    // a wrong path of its own is set first; that write's change rewrites the children from the right one
    if (own !== undefined && own !== goal.path) return setPath(ctx.data, uuid, parent);

    // the child index is eventually consistent, but a child linked a moment ago took its path from this goal
    // in its own write, which was conditioned on this goal's version
    const children = await getEntities(
      ctx.data,
      goalEntity,
      (await childEntries(ctx.data, uuid)).map((e) => e.id),
      true,
    );
    const queue = [...children.values()]
      .filter((c) => {
        const path = pathUnder(c.record, goal);
        return path !== undefined && path !== c.record.path;
      })
      .map((c) => c.record.uuid);
    // settled, not raced: the change fails (and is delivered again) only after every rewrite in flight is done
    const workers = await Promise.allSettled(
      Array.from({ length: Math.min(CONCURRENCY, queue.length) }, async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) await setPath(ctx.data, id, goal);
      }),
    );
    const failed = workers.find((w) => w.status === 'rejected');
    if (failed) throw failed.reason;
  },
};
