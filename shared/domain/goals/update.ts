/** Goal update: read the goal, then one batched read of what it names, decide (decide.ts), one transaction; then rollups and paths. */
import { canWriteContent } from '#shared/auth/caller.ts';
import { mutateEntity, runCommand } from '#shared/command/run.ts';
import { BatchRead, getEntities, getEntity } from '#shared/db/reads.ts';
import { refuse } from '#shared/decision.ts';
import { newId } from '#shared/ids.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import type { GoalUpdateCommand } from '#shared/domain/goals/commands.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import {
  addedParents,
  addedVisibleEntities,
  decideUpdate,
  editRefusal,
  goalNotFound,
  newFirstParent,
  periodToRead,
  referencedIds,
  type SeenGoal,
  type UpdateIds,
  type UpdateState,
  type UpdateWrite,
} from '#shared/domain/goals/decide.ts';
import { labelNamesOf } from '#shared/domain/labels/decide.ts';
import { goalEntity, hierarchyGuardKey, type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { closesCycle, walkDescendants } from '#shared/domain/goals/hierarchy.ts';
import { refreshRollupsAfterWrite } from '#shared/domain/goals/rollup-writes.ts';
import { requireUnchanged } from '#shared/domain/goals/reads.ts';
import { delegatesOf, heaviestField } from '#shared/domain/goals/rules.ts';
import { uniq } from '#shared/domain/fields.ts';
import { claimedLabels, labelEntity, labelsToRead, primeLabels, type LabelRecord } from '#shared/domain/labels/entity.ts';
import { addLabelCreates } from '#shared/domain/labels/service.ts';
import { teamEntity } from '#shared/domain/teams/entity.ts';
import { timePeriodEntity } from '#shared/domain/time-periods/entity.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import type { GoalView } from '#shared/domain/goals/service.ts';

/**
 * The read plan of an update, after the goal: one BatchGetItem (strongly consistent: parent versions and the
 * hierarchy guard are checked at commit) of the period, the newly named users and teams, the added parents
 * and the new first parent, the label name claims (each naming its label) and the hierarchy guard; then, in
 * parallel, the labels of claims that carry no name (written before claims did), the caller's access to the
 * new parents, and the cycle walk up from each of them (through goal records read afresh, not the eventually
 * consistent child index).
 */
async function readUpdate(ctx: DomainCtx, g: GoalRecord, input: GoalUpdateCommand) {
  // both delegate fields sent is decide's refusal (delegateConflict); delegatesOf still names what to read
  const refs = referencedIds({
    owner_uuids: input.owner_uuids ?? undefined,
    delegate_uuids: delegatesOf(input),
    team_uuids: input.team_uuids ?? undefined,
    visible_entities: addedVisibleEntities(g, input),
  });
  const periodId = periodToRead(g, input);
  const added = addedParents(g, input);
  const first = newFirstParent(g, input);
  const names = input.labels === undefined ? undefined : labelNamesOf(input.labels ?? []);
  const batch = new BatchRead(ctx);
  const period = batch.entities(timePeriodEntity, periodId === undefined ? [] : [periodId]);
  const users = batch.entities(userEntity, refs.users);
  const teams = batch.entities(teamEntity, refs.teams);
  const parents = batch.entities(
    goalEntity,
    uniq([...added, ...(first ? [first] : [])]).filter((p) => p !== g.uuid),
  );
  const claims = batch.claims('label_name', names && 'wanted' in names ? names.wanted.keys() : []);
  const guard = added.length ? batch.side(hierarchyGuardKey(ctx.tenantId)) : undefined;
  await batch.run(true);

  for (const s of users().values()) ctx.loader.prime(userEntity, s.record);
  for (const s of teams().values()) ctx.loader.prime(teamEntity, s.record);
  const lines = new Loader(ctx);
  const seen = new Map<string, SeenGoal>();
  const below = new Set<string>();
  const labelClaims = claimedLabels(claims());
  const unnamed = labelsToRead(labelClaims);
  const [labels] = await Promise.all([
    unnamed.length ? ctx.loader.many(labelEntity, unnamed) : [],
    ...[...parents()].map(async ([id, stored]) => {
      seen.set(id, { stored, access: await goalAccess(ctx, stored.record) });
      if (added.includes(id) && !stored.record.discarded_at && (await closesCycle(g.uuid, stored.record, lines))) below.add(id);
    }),
  ]);
  const state: UpdateState = {
    period: periodId === undefined ? undefined : period().get(periodId)?.record,
    known: { users: new Set(users().keys()), teams: new Set(teams().keys()) },
    parents: seen,
    below,
    labelClaims,
    labels: new Map((labels as LabelRecord[]).map((l) => [l.uuid, l])),
  };
  return { state, guardVersion: guard?.()?.v as number | undefined };
}

/**
 * The goal with the caller's access to it, then (unless the goal's edit refusal already answers: nothing more
 * is read for a write that cannot happen) the read plan of what the update names.
 */
async function readGoalUpdate(ctx: DomainCtx, kind: GoalKind, id: string, input: GoalUpdateCommand) {
  const current = await getEntity(ctx, goalEntity, id, true);
  if (!current) return undefined;
  const seen: SeenGoal = { stored: current, access: await goalAccess(ctx, current.record) };
  return { seen, plan: editRefusal(kind, current.record, seen.access) ? undefined : await readUpdate(ctx, current.record, input) };
}

export async function updateGoal(ctx: DomainCtx, kind: GoalKind, id: string, input: GoalUpdateCommand): Promise<GoalView> {
  // Drawn once, in a fixed order: every attempt (and a retry with the same Idempotency-Key) names the same records.
  const ids: UpdateIds = { shortId: newId(), metric: newId(), labels: uniq(input.labels ?? []).map(() => newId()) };
  const actor = { userUuid: ctx.caller.userId, canWriteContent: canWriteContent(ctx.caller) };
  return runCommand(ctx, {
    ids,
    read: () => readGoalUpdate(ctx, kind, id, input),
    decide: (read, now) => {
      if (!read) return refuse(goalNotFound(kind, id));
      const refusal = editRefusal(kind, read.seen.stored.record, read.seen.access);
      return refusal || !read.plan
        ? refuse(refusal ?? goalNotFound(kind, id))
        : decideUpdate(kind, read.seen, input, read.plan.state, actor, now, ids);
    },
    write: (tx, write, read) => {
      const { seen, plan } = read!;
      requireUnchanged(tx, write.parents);
      // re-parentings commit one at a time per tenant: two that together close a cycle cannot both pass their walks
      const guardVersion = plan!.guardVersion;
      if (write.guard)
        tx.putSide(
          hierarchyGuardKey(ctx.tenantId),
          { kind: 'goal_hierarchy_guard', v: (guardVersion ?? 0) + 1 },
          { if: guardVersion === undefined ? { exists: false } : { equals: { v: guardVersion } } },
        );
      addLabelCreates(tx, write.createdLabels);
      tx.replace(goalEntity, seen.stored, write.goal);
      tx.blame(heaviestField(input)).assertFits();
      return { before: seen.stored, write };
    },
    after: ({ before, write }) => afterGoalUpdate(ctx, before.record, write),
  });
}

/** After the commit: rollups when what they read changed, primed labels, descendants' paths. */
async function afterGoalUpdate(ctx: DomainCtx, g: GoalRecord, write: UpdateWrite): Promise<GoalView> {
  primeLabels(ctx.loader, write.createdLabels);
  const after = write.goal;
  const rollupInputsChanged =
    JSON.stringify(g.parent_links) !== JSON.stringify(after.parent_links) ||
    JSON.stringify(g.metric) !== JSON.stringify(after.metric) ||
    g.progress_mode !== after.progress_mode;
  let goal = after;
  if (rollupInputsChanged) {
    // the goal itself (when in rollup mode), its ancestors, and the parents it left; a rollup goal's own
    // progress was just recomputed: answer with it
    goal = (await refreshRollupsAfterWrite(ctx, [after, ...write.removedParents])).get(after.uuid) ?? after;
  }
  if (after.path !== g.path) await refreshDescendantPaths(ctx, after);
  return { goal, access: await goalAccess(ctx, goal) };
}

/**
 * Keeps `path` true below a goal whose first-parent line changed: each descendant whose own first parent
 * is the goal or a rewritten descendant gets the new prefix. `path` is derived data, so this runs after the
 * goal's write (not in its transaction, which a large subtree would not fit), is bounded and best effort: it is
 * here so the caller reads the subtree's paths at once (a `GET`, a `path_start` filter); the change stream
 * (shared/stream/projections/goal-paths.ts) is what makes them certain, level by level, whatever this left.
 */
const MAX_PATH_REWRITES = 500;
async function refreshDescendantPaths(ctx: DomainCtx, root: GoalRecord): Promise<void> {
  const walk = await walkDescendants(ctx, [root.uuid], { limit: MAX_PATH_REWRITES });
  const goals = await getEntities(ctx, goalEntity, walk.ids);
  const paths = new Map<string, string | null>([[root.uuid, root.path]]);
  const pathOf = (id: string, depth = 0): string | null | undefined => {
    if (paths.has(id)) return paths.get(id);
    const g = goals.get(id)?.record;
    const first = g?.parent_links[0]?.parent_uuid;
    if (!g || !first || depth > 100 || (first !== root.uuid && !goals.has(first))) return undefined; // first-parent line does not pass through root
    const parentPath = pathOf(first, depth + 1);
    const p = parentPath === undefined ? undefined : `${parentPath ?? first}/${id}`;
    if (p !== undefined) paths.set(id, p);
    return p;
  };
  for (const id of walk.ids) {
    const p = pathOf(id);
    if (p === undefined || goals.get(id)?.record.path === p) continue;
    await mutateEntity(
      ctx,
      goalEntity,
      id,
      (cur) => (cur.record.path === p ? undefined : { ...cur.record, path: p }),
      () => goalNotFound(goals.get(id)!.record.type, id),
    ).catch((err) => {
      ctx.log.warn('goal path refresh failed (the stream repairs it)', { goal_uuid: id, error: String(err) });
    });
  }
}
