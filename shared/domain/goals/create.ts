/** Goal create: one batched read (beside the caller's), decide (decide-create.ts), one transaction with its rollup ancestors. */
import { canWriteContent } from '#shared/auth/caller.ts';
import { newId } from '#shared/ids.ts';
import { orStored, runCommand } from '#shared/command/run.ts';
import type { Claim, Stored } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { BatchRead, getEntities } from '#shared/db/reads.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import type { GoalCreateCommand } from '#shared/domain/goals/commands.ts';
import {
  createRefusal,
  decideCreateWithRollups,
  parentRefusal,
  referencedIds,
  type CreateIds,
  type CreateStateWithAncestors,
  type SeenGoal,
} from '#shared/domain/goals/decide.ts';
import { labelNamesOf } from '#shared/domain/labels/decide.ts';
import { ValidationError } from '#shared/errors.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import { goalEntity, type GoalKind, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { fittedTo } from '#shared/domain/goals/rollup-plan.ts';
import { addGoalWrite, readAncestors, refreshRollupsAfterWrite } from '#shared/domain/goals/rollup-writes.ts';
import { delegatesOf, heaviestField, parentLinksOf } from '#shared/domain/goals/rules.ts';
import { uniq } from '#shared/domain/fields.ts';
import { requireUnchanged } from '#shared/domain/goals/reads.ts';
import { claimedLabels, labelEntity, labelsToRead, primeLabels } from '#shared/domain/labels/entity.ts';
import { addLabelCreates } from '#shared/domain/labels/service.ts';
import { teamEntity, type TeamRecord } from '#shared/domain/teams/entity.ts';
import { timePeriodEntity, type TimePeriodRecord } from '#shared/domain/time-periods/entity.ts';
import { userEntity, type UserRecord } from '#shared/domain/users/entity.ts';
import { addEntriesWrittenAtCreate } from '#shared/read-models/goal-sync.ts';
import type { GoalView } from '#shared/domain/goals/service.ts';

/** The first round of a create's read, which needs no caller (the route starts it beside the caller's read). */
export interface CreateBatch {
  period: Stored<TimePeriodRecord> | undefined;
  users: ReadonlyMap<string, Stored<UserRecord>>;
  teams: ReadonlyMap<string, Stored<TeamRecord>>;
  parents: ReadonlyMap<string, Stored<GoalRecord>>;
  claims: ReadonlyMap<string, Claim>;
}

/**
 * The read plan of a create, first round: the period, the named users and teams, the new parents (strongly
 * consistent: their versions are checked at commit) and the label name claims in one BatchGetItem.
 */
export async function readCreateBatch(data: DataCtx, input: GoalCreateCommand): Promise<CreateBatch> {
  // both delegate fields sent is decide's refusal (delegateConflict); delegatesOf still names what to read
  const refs = referencedIds({
    owner_uuids: input.owner_uuids ?? [],
    delegate_uuids: delegatesOf(input) ?? [],
    team_uuids: input.team_uuids ?? [],
    visible_entities: input.visible_entities ?? [],
  });
  const names = labelNamesOf(input.labels ?? []);
  const batch = new BatchRead(data);
  const period = batch.entities(timePeriodEntity, [input.time_period_uuid]);
  const users = batch.entities(userEntity, refs.users);
  const teams = batch.entities(teamEntity, refs.teams);
  const parents = batch.entities(
    goalEntity,
    parentLinksOf(input.parents).map((l) => l.parent_uuid),
  );
  const claims = batch.claims('label_name', 'wanted' in names ? names.wanted.keys() : []);
  await batch.run(true);
  return { period: period().get(input.time_period_uuid), users: users(), teams: teams(), parents: parents(), claims: claims() };
}

/**
 * Then, with the caller: its access to each parent, the rollup ancestors above the parents in rollup mode (one
 * batch for a chain: a parent's `path` names its line; nothing for a goal without a rollup parent), and the labels
 * of claims written before claims carried the name. A claim spells its label's name, so existing labels are not
 * read; the caller's teams only to judge a parent it does not own.
 */
async function readCreate(ctx: DomainCtx, first: CreateBatch): Promise<CreateStateWithAncestors> {
  // what presentation and access may ask for next is already here
  for (const s of first.users.values()) ctx.loader.prime(userEntity, s.record);
  for (const s of first.teams.values()) ctx.loader.prime(teamEntity, s.record);
  const labelClaims = claimedLabels(first.claims);
  const unnamed = labelsToRead(labelClaims);
  const parents = [...first.parents.values()];
  const rollupParents = parents.map((p) => p.record).filter((p) => p.progress_mode === 'rollup');
  const [seen, labels, above] = await Promise.all([
    Promise.all(parents.map(async (stored) => [stored.record.uuid, { stored, access: await goalAccess(ctx, stored.record) }] as const)),
    unnamed.length ? ctx.loader.many(labelEntity, unnamed) : [],
    rollupParents.length ? readAncestors(ctx, rollupParents) : { stored: new Map<string, Stored<GoalRecord>>(), truncated: false },
  ]);
  return {
    period: first.period?.record,
    known: { users: new Set(first.users.keys()), teams: new Set(first.teams.keys()) },
    parents: new Map(seen),
    labelClaims,
    labels: new Map(labels.map((l) => [l.uuid, l])),
    ancestors: { stored: new Map([...above.stored, ...first.parents]), truncated: above.truncated },
  };
}

/**
 * The permission checks of a create on their own (a replayed request's gate): viewers refused, and each parent
 * must still be one the caller can see (else 422 not_found, as parentRefusal) and change (403).
 */
export async function authorizeGoalCreate(ctx: DomainCtx, input: GoalCreateCommand): Promise<void> {
  const refusal = createRefusal({ userUuid: ctx.caller.userId, canWriteContent: canWriteContent(ctx.caller) });
  if (refusal) throw refusal;
  const ids = parentLinksOf(input.parents).map((l) => l.parent_uuid);
  if (!ids.length) return;
  const seen = new Map<string, SeenGoal>();
  await Promise.all(
    [...(await getEntities(ctx, goalEntity, ids))].map(async ([id, stored]) =>
      seen.set(id, { stored, access: await goalAccess(ctx, stored.record) }),
    ),
  );
  const { error, details } = parentRefusal(undefined, ids, seen);
  if (error) throw error;
  const unknown = details.filter((d) => d.code === 'not_found');
  if (unknown.length) throw new ValidationError(unknown.map((d) => d.message).join('; '), unknown);
}

/**
 * `opts.uuid`: the new goal's uuid when the caller fixes it (a bulk import, so a retry finds what it created).
 * `opts.started`: readCreateBatch begun by the route beside the caller's read (the first attempt's first round).
 * Read once (readCreateBatch, readCreate), decide once (decideCreateWithRollups: the goal, its new labels, its
 * rollup parents' aggregates), write once (the runner's one transaction).
 */
export async function createGoal(
  ctx: DomainCtx,
  kind: GoalKind,
  input: GoalCreateCommand,
  opts: { uuid?: string; started?: Promise<CreateBatch> } = {},
): Promise<GoalView> {
  // Drawn once, in a fixed order: every retried attempt (and a retry of the request with the same
  // Idempotency-Key) names the same records.
  const metric = input.metric ? newId() : '';
  const uuid = opts.uuid ?? newId();
  const ids: CreateIds = { metric, goal: uuid, labels: uniq(input.labels ?? []).map(() => newId()) };
  const actor = { userUuid: ctx.caller.userId, canWriteContent: canWriteContent(ctx.caller) };

  // Retried when a parent changed before the commit (then read again: deleted meanwhile is 422), or a label
  // this request creates was created concurrently by another one (then reused). A retry of a request that
  // committed and died (same Idempotency-Key, so the same ids) finds its goal stored and answers with it.
  return runCommand(ctx, {
    ids,
    precheck: () => createRefusal(actor),
    first: opts.started?.then((first) => readCreate(ctx, first)),
    read: async () => readCreate(ctx, await readCreateBatch(ctx, input)),
    decide: (state, now) => decideCreateWithRollups(kind, input, state, actor, now, ids),
    write: (tx, d) => {
      addLabelCreates(tx, d.createdLabels);
      addEntriesWrittenAtCreate(tx, ctx.tenantId, d.goal); // in the last-check-in order at once
      const rollups = fittedTo(d.rollups, tx.size + new WriteTx(ctx).create(goalEntity, d.goal).size - 1 + d.parents.length);
      // new parents as read when the goal commits: those the write moves are conditioned on their versions already
      const moved = new Set([...rollups.ancestors.map((a) => a.before), ...rollups.checks].map((s) => s.record.uuid));
      requireUnchanged(
        tx,
        d.parents.filter((p) => !moved.has(p.record.uuid)),
      );
      addGoalWrite(tx, rollups);
      tx.blame(heaviestField(input)).assertFits();
      return { goal: rollups.goal, created: d.createdLabels, synced: rollups.synced };
    },
    stored: orStored(goalEntity, uuid, (stored) => ({ goal: stored, created: [], synced: true })),
    after: async ({ goal, created, synced }) => {
      ctx.loader.prime(goalEntity, goal);
      primeLabels(ctx.loader, created);
      // only when an ancestor could not move in the create's transaction (one keeping no aggregate yet)
      if (!synced && goal.parent_links.length) await refreshRollupsAfterWrite(ctx, [goal]);
      return { goal, access: await goalAccess(ctx, goal) };
    },
  });
}
