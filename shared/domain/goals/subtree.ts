import type { ListEntry } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import type { GoalKind } from '#shared/domain/goals/entity.ts';
import { childEntries, childEntriesOfKind } from '#shared/domain/goals/hierarchy.ts';

/** What the caller may see of a subtree, known once the caller is: the roots it can see, and the goals it walks through. */
export interface SubtreeSight {
  roots: string[];
  /** Judged on a child's index entry; a refused goal is neither listed nor walked through. Undefined: every goal. */
  through?: (e: ListEntry) => boolean;
}

/**
 * The goals of `kind` below `roots` at any depth, with their list keys (creation-order sort key, envelope), for
 * the `ancestors_uuid` filter: index keys only, never a goal item. Breadth first, one round of Queries per level:
 * the children of every goal of the level (`goal@child_of#<goal>`, any kind) and, in the same round, the
 * children of `kind` of the goals of the level before that had children (`<kind>@parent#<goal>`). A subtree d
 * levels deep costs d rounds, and a leaf one Query.
 *
 * The first level is read before the caller is known (with the caller's own read); `sight` resolves once it is
 * and keeps the walk to the roots the caller can see and the goals it accepts, from the first level on. GSI1 is
 * eventually consistent: a link written a moment ago may not be seen yet (as on every list).
 */
export async function subtreeOfKind(ctx: DataCtx, roots: string[], kind: GoalKind, sight: Promise<SubtreeSight>): Promise<ListEntry[]> {
  const seen = new Set<string>(roots);
  const found = new Map<string, ListEntry>();
  let level = [...new Set(roots)];
  let parents: string[] = []; // goals of the level before with children: their children of `kind` come this round
  let judged: SubtreeSight | undefined;
  while (level.length || parents.length) {
    const [children, ofKind] = await Promise.all([
      Promise.all(level.map((id) => childEntries(ctx, id))),
      Promise.all(parents.map((id) => childEntriesOfKind(ctx, kind, id))),
    ]);
    for (const e of ofKind.flat()) found.set(e.id, e);
    const visibleRoots = judged ? undefined : new Set((judged = await sight).roots); // the first level: roots the caller can see
    const through = judged.through;
    const next: string[] = [];
    parents = [];
    for (const [i, id] of level.entries()) {
      if (visibleRoots && !visibleRoots.has(id)) continue;
      if (children[i]!.length) parents.push(id);
      for (const e of children[i]!) {
        if (seen.has(e.id) || (through && !through(e))) continue;
        seen.add(e.id);
        next.push(e.id);
      }
    }
    level = next;
  }
  return [...found.values()];
}
