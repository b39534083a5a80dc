/** Goal create: one batched read, decide (decide.ts), one transaction; then rollups. */
import { canWriteContent } from '#shared/auth/caller.ts';
import { newId } from '#shared/ids.ts';
import { orStored, runCommand } from '#shared/command/run.ts';
import { BatchRead, getEntities } from '#shared/db/reads.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import type { GoalCreateCommand } from '#shared/domain/goals/commands.ts';
import {
  createRefusal,
  decideCreate,
  parentRefusal,
  referencedIds,
  type CreateIds,
  type CreateState,
  type SeenGoal,
} from '#shared/domain/goals/decide.ts';
import { labelNamesOf } from '#shared/domain/labels/decide.ts';
import { ValidationError } from '#shared/errors.ts';
import { goalAccess } from '#shared/domain/goals/access.ts';
import { goalEntity, type GoalKind } from '#shared/domain/goals/entity.ts';
import { refreshRollupsAfterWrite } from '#shared/domain/goals/rollup-writes.ts';
import { delegatesOf, heaviestField, parentLinksOf } from '#shared/domain/goals/rules.ts';
import { uniq } from '#shared/domain/fields.ts';
import { requireUnchanged } from '#shared/domain/goals/reads.ts';
import { claimedLabels, labelEntity, labelsToRead, primeLabels } from '#shared/domain/labels/entity.ts';
import { addLabelCreates } from '#shared/domain/labels/service.ts';
import { teamEntity } from '#shared/domain/teams/entity.ts';
import { timePeriodEntity } from '#shared/domain/time-periods/entity.ts';
import { userEntity } from '#shared/domain/users/entity.ts';
import { addEntriesWrittenAtCreate } from '#shared/read-models/goal-sync.ts';
import type { GoalView } from '#shared/domain/goals/service.ts';

/**
 * The read plan of a create: the period, the named users and teams, the new parents (strongly consistent:
 * their versions are checked at commit) and the label name claims in one BatchGetItem. A claim carries its
 * label's name as spelled, so existing labels are not read (only those whose claim predates that, a second
 * round); the caller's teams only to judge a parent it does not own.
 */
async function readCreate(ctx: DomainCtx, input: GoalCreateCommand): Promise<CreateState> {
  // both delegate fields sent is decide's refusal (delegateConflict); delegatesOf still names what to read
  const refs = referencedIds({
    owner_uuids: input.owner_uuids ?? [],
    delegate_uuids: delegatesOf(input) ?? [],
    team_uuids: input.team_uuids ?? [],
    visible_entities: input.visible_entities ?? [],
  });
  const names = labelNamesOf(input.labels ?? []);
  const batch = new BatchRead(ctx);
  const period = batch.entities(timePeriodEntity, [input.time_period_uuid]);
  const users = batch.entities(userEntity, refs.users);
  const teams = batch.entities(teamEntity, refs.teams);
  const parents = batch.entities(
    goalEntity,
    parentLinksOf(input.parents).map((l) => l.parent_uuid),
  );
  const claims = batch.claims('label_name', 'wanted' in names ? names.wanted.keys() : []);
  await batch.run(true);

  // what presentation and access may ask for next is already here
  for (const s of users().values()) ctx.loader.prime(userEntity, s.record);
  for (const s of teams().values()) ctx.loader.prime(teamEntity, s.record);
  const seen = new Map<string, SeenGoal>();
  await Promise.all([...parents()].map(async ([id, stored]) => seen.set(id, { stored, access: await goalAccess(ctx, stored.record) })));
  const labelClaims = claimedLabels(claims());
  const unnamed = labelsToRead(labelClaims);
  const labels = unnamed.length ? await ctx.loader.many(labelEntity, unnamed) : [];
  return {
    period: period().get(input.time_period_uuid)?.record,
    known: { users: new Set(users().keys()), teams: new Set(teams().keys()) },
    parents: seen,
    labelClaims,
    labels: new Map(labels.map((l) => [l.uuid, l])),
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

/** `opts.uuid`: the new goal's uuid when the caller fixes it (a bulk import, so a retry finds what it created). */
export async function createGoal(
  ctx: DomainCtx,
  kind: GoalKind,
  input: GoalCreateCommand,
  opts: { uuid?: string } = {},
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
    read: () => readCreate(ctx, input),
    decide: (state, now) => decideCreate(kind, input, state, actor, now, ids),
    write: (tx, write) => {
      requireUnchanged(tx, write.parents);
      addLabelCreates(tx, write.createdLabels);
      tx.create(goalEntity, write.goal);
      addEntriesWrittenAtCreate(tx, ctx.tenantId, write.goal); // in the last-check-in order at once
      tx.blame(heaviestField(input)).assertFits();
      return { goal: write.goal, created: write.createdLabels };
    },
    stored: orStored(goalEntity, uuid, (stored) => ({ goal: stored, created: [] })),
    after: async ({ goal, created }) => {
      ctx.loader.prime(goalEntity, goal);
      primeLabels(ctx.loader, created);
      if (goal.parent_links.length) await refreshRollupsAfterWrite(ctx, [goal]);
      return { goal, access: await goalAccess(ctx, goal) };
    },
  });
}
