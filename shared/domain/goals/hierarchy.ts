import { entryPartitionOf, partitionEntries } from '#shared/db/index-queries.ts';
import type { ListEntry } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { childLinks } from '#shared/domain/goals/child-refs.ts';
import { childrenOfKind, goalEntity, type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';
import type { Loader } from '#shared/list/entity-cache.ts';

/**
 * Walking the goal hierarchy. Down: children are found from entry lists (`goal@child_of#<parent>` for every
 * kind, `<kind>@parent#<parent>` for one kind), so a walk down reads entry keys (id + envelope), never goal
 * items. The kind-agnostic list is kept in the parent's partition and read strongly consistent (child-refs.ts):
 * every link committed is seen. The kind lists are GSI1 only, eventually consistent: a link written a moment
 * ago may not be seen yet (the same window every list has). Up: parents are named on the goal records
 * themselves (`parent_links`).
 */

/** Every entry of one GSI1 partition, all pages, in creation order. */
async function allEntries(ctx: DataCtx, partition: string): Promise<ListEntry[]> {
  const out: ListEntry[] = [];
  for await (const e of partitionEntries(ctx, partition)) out.push(e);
  return out;
}

/** Direct children of a goal, any kind (with their envelope), every link committed included (child-refs.ts). */
export const childEntries = (ctx: DataCtx, parentUuid: string) => childLinks(ctx, parentUuid);

/** Direct children of a goal of one kind. */
export const childEntriesOfKind = (ctx: DataCtx, kind: GoalKind, parentUuid: string) =>
  allEntries(ctx, entryPartitionOf(ctx, childrenOfKind(kind), parentUuid));

export interface Walk {
  /** Descendants in breadth-first order (each once; the roots themselves are never included). */
  ids: string[];
  /** True when the walk stopped at `limit` descendants. */
  truncated: boolean;
}

/**
 * Breadth-first walk below `roots`, one Query per visited goal (a level's queries run in parallel), reading
 * index keys only (hierarchy deletes, path rewrites; the `ancestors_uuid` filter walks in subtree.ts).
 */
export async function walkDescendants(ctx: DataCtx, roots: string[], opts: { limit?: number } = {}): Promise<Walk> {
  const limit = opts.limit ?? Number.POSITIVE_INFINITY;
  const seen = new Set<string>(roots);
  const ids: string[] = [];
  let level = [...new Set(roots)];
  while (level.length) {
    const children = await Promise.all(level.map((id) => childEntries(ctx, id)));
    const next: string[] = [];
    for (const e of children.flat()) {
      if (seen.has(e.id)) continue;
      seen.add(e.id);
      ids.push(e.id);
      next.push(e.id);
      if (ids.length >= limit) return { ids, truncated: true };
    }
    level = next;
  }
  return { ids, truncated: false };
}

/**
 * Walks up from a goal level by level through its records (one loader batch per level), each goal once;
 * `stop` ends the walk at a level's ids; `through` keeps the walk to the parents it accepts (a refused one is
 * neither an ancestor nor walked through).
 */
async function walkUp(
  goal: GoalRecord,
  loader: Loader,
  stop?: (ids: string[]) => boolean,
  through?: (g: GoalRecord) => boolean,
): Promise<{ ancestors: GoalRecord[]; stopped: boolean }> {
  const seen = new Set<string>([goal.uuid]);
  const ancestors: GoalRecord[] = [];
  let level = goal.parent_links.map((p) => p.parent_uuid);
  while (level.length) {
    if (stop?.(level)) return { ancestors, stopped: true };
    const fresh = level.filter((id) => !seen.has(id));
    fresh.forEach((id) => seen.add(id));
    const parents = (await loader.many(goalEntity, fresh)).filter((p) => !through || through(p));
    ancestors.push(...parents);
    level = parents.flatMap((p) => p.parent_links.map((l) => l.parent_uuid));
  }
  return { ancestors, stopped: false };
}

/**
 * Every ancestor of a goal (all parents, at any depth), nearest first, read through the per-request loader
 * (one batch per level). Used by the `ancestors_*` filters that need ancestor attributes, with `visible`:
 * only ancestors the caller can see count, and the walk does not go up through one it cannot see (its
 * parent links are its own fields), the same view `walkDescendants` takes with `through`.
 */
export const ancestorsOf = async (goal: GoalRecord, loader: Loader, visible?: (g: GoalRecord) => boolean): Promise<GoalRecord[]> =>
  (await walkUp(goal, loader, undefined, visible)).ancestors;

/**
 * True when linking `goalUuid` under `parent` would close a cycle: the parent is the goal itself or below
 * it, that is the goal is one of the parent's ancestors. Walks up from the parent through goal records: a
 * goal's line up is short where its subtree may hold thousands of goals, and the records (unlike the
 * eventually consistent child index) already carry a link committed a moment ago.
 */
export async function closesCycle(goalUuid: string, parent: GoalRecord, loader: Loader): Promise<boolean> {
  return parent.uuid === goalUuid || (await walkUp(parent, loader, (ids) => ids.includes(goalUuid))).stopped;
}
