import { runCommand } from '#shared/command/run.ts';
import type { Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities } from '#shared/db/reads.ts';
import type { WriteTx } from '#shared/db/write-tx.ts';
import { accept, type Decision } from '#shared/decision.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { childEntries } from '#shared/domain/goals/hierarchy.ts';
import { MAX_ROLLUP_GOALS, namedAbove, planRollupWrites, type RollupState, type RollupWrite } from '#shared/domain/goals/progress.ts';
import type { AncestorsRead, GoalWriteWithRollups } from '#shared/domain/goals/rollup-plan.ts';
import { ConcurrentUpdateError, MAX_TRANSACTION_ITEMS } from '#shared/errors.ts';

// The rollup writes of shared/domain/goals/progress.ts (read, decide there, write): OWNED BY THE CHECK-INS WORK too.

/**
 * The ancestors a change of `from` can move: their parents, and upwards through rollup goals (a manual goal's
 * progress does not follow its children, so the walk stops there), each once, one strongly consistent batch
 * per round; a goal's `path` names its whole first-parent line, so a chain is read in one batch.
 */
export async function readAncestors(ctx: DataCtx, from: GoalRecord[]): Promise<AncestorsRead> {
  const stored = new Map<string, Stored<GoalRecord>>();
  const self = new Set(from.map((g) => g.uuid));
  const named = new Set<string>();
  let truncated = false;
  const name = (id: string) => {
    if (named.has(id) || self.has(id)) return;
    if (named.size >= MAX_ROLLUP_GOALS) truncated = true;
    else named.add(id);
  };
  for (const g of from) namedAbove(g).forEach(name);
  for (const fetched = new Set<string>(); !truncated; ) {
    const missing = [...named].filter((id) => !fetched.has(id));
    if (!missing.length) break;
    missing.forEach((id) => fetched.add(id));
    for (const [id, s] of await getEntities(ctx, goalEntity, missing, true)) {
      stored.set(id, s);
      if (s.record.progress_mode === 'rollup') namedAbove(s.record).forEach(name);
    }
  }
  return { stored, truncated };
}

/** Adds the goal write (a replace of the goal read, or its create) and its rollup ancestors (planGoalWrite) to `tx`. */
export function addGoalWrite(tx: WriteTx, w: GoalWriteWithRollups): WriteTx {
  if (w.before) tx.replace(goalEntity, w.before, w.goal);
  else tx.create(goalEntity, w.goal);
  for (const a of w.ancestors) tx.replace(goalEntity, a.before, a.after);
  for (const c of w.checks) tx.checkVersion(goalEntity, c);
  return tx;
}

/**
 * Read plan of a recompute: the start goals, then every ancestor reachable through goals that can move (a
 * start goal or a rollup goal), batched: each round trip fetches every id named so far (a goal's `path` names
 * its whole first-parent line, so a chain costs one or two batches, not one per level); then the children of
 * every rollup goal (one Query each, all at once) and every child, read again in one batch strictly after its
 * parent was read: a child value read before the parent's version could be older than what that version
 * counts, and the parent's write is conditioned on that version only. Strongly consistent.
 */
export async function readRollupState(
  ctx: DataCtx,
  start: string[],
  written: Map<string, GoalRecord>,
): Promise<{ state: RollupState; stored: Map<string, Stored<GoalRecord>>; truncated: boolean }> {
  const stored = new Map<string, Stored<GoalRecord>>();
  const goals = new Map<string, GoalRecord>(written);
  const startSet = new Set(start);
  const walksUp = (g: GoalRecord) => startSet.has(g.uuid) || g.progress_mode === 'rollup';
  const named = new Set<string>();
  let truncated = false;
  const name = (id: string) => {
    if (named.has(id)) return;
    if (named.size >= MAX_ROLLUP_GOALS) truncated = true;
    else named.add(id);
  };
  for (const id of start) {
    const known = written.get(id);
    if (known && known.progress_mode !== 'rollup') namedAbove(known).forEach(name);
    else name(id);
  }
  for (let fetched = new Set<string>(); ; ) {
    const missing = [...named].filter((id) => !fetched.has(id));
    if (!missing.length) break;
    missing.forEach((id) => fetched.add(id));
    for (const [id, s] of await getEntities(ctx, goalEntity, missing, true)) {
      stored.set(id, s);
      goals.set(id, s.record);
    }
    for (const id of missing) {
      const g = goals.get(id);
      if (g && walksUp(g)) namedAbove(g).forEach(name);
    }
  }
  const rollups = [...stored.values()].map((s) => s.record).filter((g) => g.progress_mode === 'rollup');
  // Strongly consistent (the parent's own partition: child-refs.ts), so every link committed before is counted.
  const childLists = await Promise.all(rollups.map((g) => childEntries(ctx, g.uuid)));
  // A start goal the caller just wrote naming the parent is its child whatever was read.
  const startGoals = start.map((id) => goals.get(id)).filter((g): g is GoalRecord => !!g);
  const childrenOf = new Map(
    rollups.map((g, i) => [
      g.uuid,
      [
        ...new Set([
          ...childLists[i]!.map((e) => e.id),
          ...startGoals.filter((s) => s.parent_links.some((l) => l.parent_uuid === g.uuid)).map((s) => s.uuid),
        ]),
      ],
    ]),
  );
  const children = new Set([...childrenOf.values()].flat());
  const fresh = await getEntities(ctx, goalEntity, children, true);
  for (const id of children) {
    const s = fresh.get(id);
    if (s) goals.set(id, s.record);
    else goals.delete(id); // gone (a failed import's goals are hard-deleted)
  }
  // A child is counted only while its record (read strongly) still names the parent: a list read from the index
  // (a tenant not moved yet, child-refs.ts) may still show a link removed a moment ago.
  for (const [parent, ids] of childrenOf)
    childrenOf.set(
      parent,
      ids.filter((id) => goals.get(id)?.parent_links.some((l) => l.parent_uuid === parent)),
    );
  return { state: { goals, childrenOf }, stored, truncated };
}

/**
 * Brings the given goals (when they are in rollup mode) and every `progress_mode = rollup` ancestor of
 * them up to date before returning, recomputed from their children. Call after any write that changes a
 * goal's progress, its parent links, its contribution, its discarded/archived state, its progress_mode or
 * its metric and did not move its ancestors in its own transaction (planGoalWrite, rollup-plan.ts). When a goal
 * leaves a parent, pass the former parent too: it is recomputed itself (if rollup) and upwards.
 *
 * A goal may be passed as the record the caller just wrote: it only names the parents to start from (the
 * values counted are read again, after the parents).
 *
 * Read (readRollupState, batched), decide (planRollupWrites, pure), write: the goals that changed, children
 * first, in transactions of at most 100 conditioned on the versions read, so a concurrent write of a shared
 * ancestor makes one of them read again (the runner's retry): whoever commits last has seen every child write
 * committed before it. A refresh whose writes fit one transaction (and whose walk was not cut at
 * MAX_ROLLUP_GOALS) marks them synced: their effect upwards is in that transaction. Returns the latest
 * record of every goal read (recomputed ones as written).
 */
export async function refreshRollups(ctx: DataCtx, goals: Array<string | GoalRecord>): Promise<Map<string, GoalRecord>> {
  const written = new Map<string, GoalRecord>();
  for (const g of goals) if (typeof g !== 'string') written.set(g.uuid, g);
  const start = [...new Set(goals.map((g) => (typeof g === 'string' ? g : g.uuid)))];
  // Busy parents (many children written at once) contend; the child's write is already committed by now, so a
  // 409 here would wrongly invite the client to repeat it: the one retry budget is sized for that burst.
  return runCommand(ctx, {
    clock: { perAttempt: true },
    read: () => readRollupState(ctx, start, written),
    decide: (read, now) => decideRollupRecords(read, planRollupWrites(read.state, start), now),
    write: (first, changes, read, run) => {
      // Over one transaction's size: a plan of several, children first, which the runner commits in order.
      let tx = first;
      for (const { before, after } of changes) {
        if (tx.size >= MAX_TRANSACTION_ITEMS) tx = run.part();
        tx.replace(goalEntity, before, after);
      }
      const latest = new Map(read.state.goals);
      for (const { after } of changes) latest.set(after.uuid, after);
      return latest;
    },
  });
}

/**
 * refreshRollups after a request's write committed. When the refresh runs out of its retry budget (an ancestor
 * busier than the budget absorbs), the request still answers its 2xx: the write happened, and an error would
 * tell the client it did not (a retry without the Idempotency-Key would make it twice). The change stream's
 * rollups projection then brings the ancestors up to date, as derived state (contract 14, docs/architecture.md:
 * the one case where an ancestor's rollup follows a 2xx late). Returns what refreshRollups returns, or nothing then.
 */
export async function refreshRollupsAfterWrite(ctx: DomainCtx, goals: Array<string | GoalRecord>): Promise<Map<string, GoalRecord>> {
  try {
    return await refreshRollups(ctx, goals);
  } catch (err) {
    // the runner's exhausted budget, not one write's failed condition read as an answer (committedUnlessConditionFails)
    if (!(err instanceof ConcurrentUpdateError)) throw err;
    ctx.log.warn('rollup refresh left to the change stream: its retry budget ran out', {
      goals: goals.map((g) => (typeof g === 'string' ? g : g.uuid)),
    });
    return new Map();
  }
}

/**
 * The recomputed goals as written (`writes`, planRollupWrites' values): moved progress is stamped `now` with the
 * rollup as its cause; all of them marked synced when the refresh is atomic (one transaction, walk not cut).
 */
export function decideRollupRecords(
  read: { stored: Map<string, Stored<GoalRecord>>; truncated: boolean },
  writes: Map<string, RollupWrite>,
  now: string,
): Decision<Array<{ before: Stored<GoalRecord>; after: GoalRecord }>> {
  const atomic = !read.truncated && writes.size <= MAX_TRANSACTION_ITEMS;
  return accept(
    [...writes].map(([id, w]) => {
      const before = read.stored.get(id)!;
      const moved = w.progress !== before.record.current_progress;
      const after: GoalRecord = {
        ...before.record,
        current_progress: w.progress,
        rollup: w.rollup,
        rollup_synced_v: atomic ? before.version + 1 : null,
        ...(moved ? { updated_at: now, progress_cause: { cause: 'rollup' as const, at: now } } : {}),
      };
      return { before, after };
    }),
  );
}
