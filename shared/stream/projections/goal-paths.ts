import type { Stored } from '#shared/db/model.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import { replaceOp } from '#shared/db/tx-ops.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { childEntries } from '#shared/domain/goals/hierarchy.ts';
import { pathUnder } from '#shared/domain/goals/rules.ts';
import { entityRecord } from '#shared/stream/changes.ts';
import type { Projection, ProjectionWrites, Step } from '#shared/stream/projection.ts';

const firstParent = (g: GoalRecord) => g.parent_links[0]?.parent_uuid;

/** Children rewritten at once: a parent of hundreds of children should not take one write's latency each. */
const CONCURRENCY = 8;

/** The goal's path under `parent` when it differs from the one it has (pathUnder: undefined when `parent` is not its first parent). */
function pathWrite(goal: Stored<GoalRecord> | undefined, parent: GoalRecord | undefined): ProjectionWrites {
  const path = goal && pathUnder(goal.record, parent);
  return path === undefined || path === goal!.record.path
    ? {}
    : { transactions: [[replaceOp(goalEntity, goal!, { ...goal!.record, path })]] };
}

/**
 * A child's path under `parent` as read by the change's step: the child read again (each on its own, conditioned on
 * its version: a lost race reads it again and decides again); nothing written when its path is already right or
 * `parent` is no longer its first parent (then its own change brings the right one), or it is gone.
 */
export const childPathStep = (id: string, parent: GoalRecord): Step<Stored<GoalRecord> | undefined> => ({
  reads: (data) => getEntity(data, goalEntity, id, true),
  project: (child) => pathWrite(child, parent),
});

/** The goal, its first parent, and (when its own path is right) its children, as read now. */
export interface GoalPathsState {
  goal: Stored<GoalRecord> | undefined;
  parent: GoalRecord | undefined;
  children: Stored<GoalRecord>[];
}

/**
 * A goal's `path` (its first-parent uuid chain, goals/rules.ts pathFor) from the change stream. When a goal's
 * path or first parent changed, the goal's own path is checked against its first parent as it is now (an
 * operator's or an import's write may have set a wrong one: it is rewritten, and that change comes back here);
 * then each direct child whose first parent it is gets the path below it (`childPathStep`, 8 at once). Each
 * child's write is itself a goal change whose path moved, so the stream carries the rewrite down the subtree
 * level by level.
 *
 * The request path rewrites the subtree at once after a re-parenting (read-your-writes, bounded, best effort:
 * goals/update.ts), so this normally finds nothing to do; it repairs what that left (the function died midway,
 * a write failed, a subtree past its bound). Idempotent: it reads the goals as they are now and writes only a
 * path that differs, conditioned on that goal's version; a replayed or older change finds nothing to do.
 */
export const goalPathsProjection: Projection<GoalPathsState> = {
  name: 'goal-paths',
  accepts(change) {
    const before = entityRecord<GoalRecord>(change, 'goal', 'old');
    const after = entityRecord<GoalRecord>(change, 'goal', 'new');
    // a created goal has no children yet and took its path from its parent in its own write; a deleted one
    // leaves its children's paths to their own next move
    return before !== undefined && after !== undefined && (before.path !== after.path || firstParent(before) !== firstParent(after));
  },
  async reads(change, data) {
    const uuid = entityRecord<GoalRecord>(change, 'goal', 'new')!.uuid;
    const goal = await getEntity(data, goalEntity, uuid, true);
    const first = goal && firstParent(goal.record);
    const parent = first === undefined ? undefined : (await getEntity(data, goalEntity, first, true))?.record;
    if (!goal || ownPathWrong(goal.record, parent)) return { goal, parent, children: [] };
    // the child index is eventually consistent, but a child linked a moment ago took its path from this goal
    // in its own write, which was conditioned on this goal's version
    const ids = (await childEntries(data, uuid)).map((e) => e.id);
    return { goal, parent, children: [...(await getEntities(data, goalEntity, ids, true)).values()] };
  },
  project(_change, { goal, parent, children }) {
    if (!goal) return {};
    // a wrong path of its own is set first; that write's change rewrites the children from the right one
    if (ownPathWrong(goal.record, parent)) return pathWrite(goal, parent);
    const steps = children.filter((c) => pathWrite(c, goal.record).transactions).map((c) => childPathStep(c.record.uuid, goal.record));
    return steps.length ? { steps, concurrency: CONCURRENCY } : {};
  },
};

/** Whether the goal's own path is not the one under its first parent as read (a first parent gone: nothing to say). */
function ownPathWrong(goal: GoalRecord, parent: GoalRecord | undefined): boolean {
  const first = firstParent(goal);
  const own = first === undefined || parent ? pathUnder(goal, parent) : undefined;
  return own !== undefined && own !== goal.path;
}
