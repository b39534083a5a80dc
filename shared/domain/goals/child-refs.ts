import { nowIso } from '#shared/clock.ts';
import { runCommand } from '#shared/command/run.ts';
import { partitionEntries } from '#shared/db/index-queries.ts';
import { keys } from '#shared/db/keys.ts';
import type { ListEntry } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntity } from '#shared/db/reads.ts';
import { keptEntries } from '#shared/db/references.ts';
import { layoutMove } from '#shared/db/tenant-layouts.ts';
import { accept } from '#shared/decision.ts';
import { childrenOfGoal, GOAL_KINDS, goalEntity } from '#shared/domain/goals/entity.ts';

/**
 * A goal's children as its own partition lists them: each `child_of` entry is kept there (childrenOfGoal), put
 * and deleted in the transaction that links or unlinks the child, so one strongly consistent Query sees every
 * link committed, where the child index (GSI1) may lag. A rollup recompute that counted from the index could
 * miss a child linked a moment ago and still mark itself synced (rollup-writes.ts).
 *
 * Goals stored before keep theirs in their own partition (GoalRecord.child_refs absent), found only on the
 * index: until the tenant's marker says every goal moved (written with a new tenant, or by the backfill
 * below), the index is read too, in parallel, and the two merged. That is correct under the index's lag: a
 * link written since is in the parent's partition (every write moves the goal's entries: goalEntity.layout), an
 * older one long on the index.
 */

/** The tenant's goals all keep their children's links (a new tenant's, or after the backfill below). */
const moved = layoutMove({ key: keys.childRefsState, item: (at) => ({ kind: 'goal_layout', moved_at: at }) });

/** Marks the tenant's goals all moved, as part of `tx` (a new tenant's create: it has no goals yet). */
export const putChildRefsMoved = moved.mark;

/** Direct children of a goal, any kind (with their envelope), every link committed included; creation order. */
export async function childLinks(ctx: DataCtx, parentUuid: string): Promise<ListEntry[]> {
  const kept = keptEntries(ctx, goalEntity.type, parentUuid, childrenOfGoal);
  if (moved.known(ctx.tenantId)) return kept;
  const [own, indexed] = await Promise.all([
    kept,
    collect(partitionEntries(ctx, keys.entryList(ctx.tenantId, childrenOfGoal.list, childrenOfGoal.name, parentUuid))),
    moved.marked(ctx), // known from now on when marked
  ]);
  const ids = new Set(own.map((e) => e.id));
  return [...own, ...indexed.filter((e) => !ids.has(e.id))].sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Moves one goal's `child_of` entries to its parents' partitions (a write of the goal as it is); true when it wrote. */
const moveGoal = (ctx: DataCtx, uuid: string): Promise<boolean> =>
  runCommand(ctx, {
    read: () => getEntity(ctx, goalEntity, uuid, true),
    // moved already, or no parent to keep its entries: nothing to write
    decide: (stored) => accept(stored && !stored.record.child_refs && stored.record.parent_links.length ? stored : undefined),
    write: (tx, stored) => {
      if (stored) tx.replace(goalEntity, stored, stored.record);
      return !!stored;
    },
  });

/**
 * The backfill for goals stored before `child_of` entries were kept by their parents (`npm run admin --
 * backfill-child-refs --tenant T`, once the code that keeps them is deployed everywhere): every goal with a
 * parent written again as it is (its entries move; each write conditioned on the version read), then the
 * tenant marked, so child lists stop reading the index. Idempotent: a second run writes nothing.
 */
export async function backfillChildRefs(ctx: DataCtx, opts: { concurrency?: number } = {}): Promise<{ goals: number; moved: number }> {
  const partitions = GOAL_KINDS.map((kind) => keys.entityList(ctx.tenantId, kind));
  const done = await moved.moveAll(ctx, partitions, (id) => moveGoal(ctx, id), { ...opts, at: nowIso() });
  return { goals: done.seen, moved: done.moved };
}
