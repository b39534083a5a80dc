import { newId } from '#shared/ids.ts';
import { nowIso } from '#shared/clock.ts';
import { createdOrStored, retryOnConflict } from '#shared/db/commands.ts';
import type { DataCtx, Stored } from '#shared/db/model.ts';
import { getEntity } from '#shared/db/reads.ts';
import { querySide } from '#shared/db/side-items.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { decideCreate, decideDelete, decideUpdate, deleteNeedsNext, goalFollowing, type CheckinCreateCommand, type CheckinUpdateCommand, type Decision, type GoalState, type OrderHead } from '#shared/domain/checkins/decide.ts';
import { checkinEntity, checkinOrderItemKey, checkinOrderKey, type CheckinRecord } from '#shared/domain/checkins/entity.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { goalAccess, type GoalAccess } from '#shared/domain/goals/access.ts';
import { readableGoal } from '#shared/domain/goals/reads.ts';
import { goalEntity, type GoalRecord } from '#shared/domain/goals/entity.ts';
import { addGoalWrite, refreshRollups, rollupsWithGoalWrite } from '#shared/domain/goals/rollup-writes.ts';
import { reportSignal } from '#shared/domain/signals.ts';
import { primeLabels, type LabelRecord } from '#shared/domain/labels/entity.ts';
import { addLabelCreates, resolveLabelNames } from '#shared/domain/labels/service.ts';
import { NotFoundError, ValidationError, type AppError } from '#shared/errors.ts';

/** The commands with the label names they attach (resolved to labels before deciding). */
export type CheckinCreateInput = CheckinCreateCommand & { labels?: string[] };
export type CheckinUpdateInput = CheckinUpdateCommand & { labels?: string[] };

/** A check-in with its goal and the caller's access to that goal (what the caller may do with the check-in). */
export interface CheckinView {
  checkin: CheckinRecord;
  goal: GoalRecord;
  access: GoalAccess;
}

/*
 * Rules decided here (the spec and contract leave them open; the OpenAPI descriptions say the same):
 *  - A check-in is an action on its goal (the goal's `can_checkin`): creating, updating or deleting one
 *    needs edit rights on the goal, reading one needs the goal visible. `goal_uuid` in a create body is a
 *    reference (contract 1): a goal that is not in the caller's tenant (another tenant's uuid included) is
 *    422 validation_failed (field goal_uuid, code not_found), and so is a goal the caller cannot see, with
 *    the same answer (contract 5: nothing tells it exists); a goal the caller sees but cannot edit is 403.
 *    Updating, deleting or reading a check-in of a goal the caller cannot see or edit is 403 (the check-in
 *    is addressed by its own uuid, 404 outside the tenant). The check-ins of a deleted (discarded) or
 *    archived goal are frozen: creating, updating or deleting one is 422 validation_failed on goal_uuid
 *    (the goal's `can_checkin` is false then too).
 *  - The goal follows its latest check-in (latest checkin_date, then latest created): current_value,
 *    current_status, score, last_checkin_date, value/status_updated_at (= the check-in's updated_at) and
 *    value/status_updated_by_uuid (= who wrote it last), and current_progress = the goal's progress at
 *    that value (see progress.ts; a rollup goal keeps its rollup progress). With no check-in left the goal
 *    goes back to its never-checked-in state (nulls, current_status not_started).
 *  - `score` only with status closed (422 otherwise); on update, moving a check-in off closed clears it.
 *  - `progress` and `metric_uuid` of a check-in are taken from the goal's metric when the value is
 *    written (create, or update with `value`), so an old check-in keeps the progress it reported.
 *  - Delete is a hard delete; the response is the flat deleted record.
 */

const notFound = (id: string) => new NotFoundError('Checkin', id);
const goalNotFound = (id: string) => new NotFoundError('Goal', id);
/** goal_uuid of a create body naming no goal the caller can see (unknown, another tenant's, or invisible: one answer). */
export const unknownGoal = (id: string) => ValidationError.field('goal_uuid', 'not_found', `goal_uuid ${id} is not a goal of this tenant`);

/** The stream's projection re-exports: the goal follows its latest check-in (decide.ts). */
export { goalFollowing };

/**
 * The goal's check-ins newest first (by checkinOrderKey), read strongly consistently from its order
 * partition: at most `limit`.
 */
export async function newestOf(ctx: DataCtx, goalUuid: string, limit: number): Promise<OrderHead[]> {
  const items = await querySide(ctx, checkinOrderItemKey(ctx.tenantId, goalUuid, '').PK, { forward: false, consistent: true, limit });
  return items.map((i) => ({ id: i.id as string, orderKey: i.SK }));
}

/**
 * Read plan of a check-in write on a goal: the goal (strongly consistent, with its version) beside whatever
 * else the command reads (`extra`), then its newest `newest` order items beside the caller's access to it.
 * The order is read after the goal on purpose: a check-in committed before the goal was read is in the order,
 * and one committed after it moves the goal's version, which the write is conditioned on. Read at once, a
 * check-in committing between the two reads could be missing from the order while the goal already follows
 * it; this write would then take the goal's lead from a newer check-in (moving its rollup parents by it), and
 * the stream would set the goal back to the newer one without them.
 */
async function readGoalState<X>(ctx: DomainCtx, goalUuid: string, newest: number, extra: () => Promise<X>, unknown: () => AppError): Promise<{ stored: Stored<GoalRecord>; state: GoalState; extra: X }> {
  const [stored, more] = await Promise.all([getEntity(ctx, goalEntity, goalUuid, true), extra()]);
  if (!stored) throw unknown();
  const [heads, access] = await Promise.all([newestOf(ctx, goalUuid, newest), goalAccess(ctx, stored.record)]);
  return { stored, state: { goal: stored.record, access, newest: heads }, extra: more };
}

/** Unwraps a decision: its error is thrown (the handler maps it), its writes returned. */
function decided<T>(d: Decision<T>): T {
  if ('error' in d) throw d.error;
  return d.write;
}

/**
 * Runs read -> decide -> write for one check-in command, again after every lost race (the goal's version
 * serializes the check-in writes of one goal, the rollup ancestors' versions the check-ins under one parent;
 * many concurrent ones can outlast one round of retries, so the whole loop is retried again before a 409
 * reaches the client). The goal's rollup ancestors move in the same transaction (`commitWithRollups`); when they
 * could not (an ancestor without its aggregate yet), they are recomputed before the request returns.
 */
async function commitOnGoal(ctx: DomainCtx, attempt: () => Promise<{ after: GoalRecord; synced: boolean; access: GoalAccess }>) {
  const { after, synced, access } = await retryOnConflict(() => retryOnConflict(attempt));
  if (!synced) await refreshRollups(ctx, [after.uuid]);
  ctx.loader.prime(goalEntity, after);
  return { goal: after, access };
}

/**
 * Completes a check-in transaction with the goal write and its rollup ancestors (read now: the goal's
 * rollup ancestry, whatever the number of siblings) and commits it.
 */
async function commitWithRollups(ctx: DomainCtx, tx: WriteTx, before: Stored<GoalRecord>, after: GoalRecord): Promise<{ after: GoalRecord; synced: boolean }> {
  const rollups = await rollupsWithGoalWrite(ctx, before, after, tx.size);
  await addGoalWrite(tx, before, rollups).commit();
  if (rollups.synced) reportSignal('rollupDepth', rollups.ancestors.length); // the operator's RollupDepth metric
  return { after: rollups.goal, synced: rollups.synced };
}

// ---------- reads ----------

async function storedCheckin(ctx: DataCtx, id: string, consistent = false): Promise<Stored<CheckinRecord>> {
  const stored = await getEntity(ctx, checkinEntity, id, consistent);
  if (!stored) throw notFound(id);
  return stored;
}

/** GET /checkins/{id}: 404 outside the caller's tenant, 403 when the caller cannot see its goal. */
export async function getCheckin(ctx: DomainCtx, id: string): Promise<CheckinView> {
  const { record } = await storedCheckin(ctx, id);
  const { goal, access } = await readableGoal(ctx, record.goal_uuid);
  return { checkin: record, goal, access };
}

// ---------- writes: read, decide, write ----------

const commandContext = (ctx: DomainCtx) => ({ callerUuid: ctx.caller.userId });

export async function createCheckin(ctx: DomainCtx, input: CheckinCreateInput): Promise<CheckinView> {
  // Identity and creation time are fixed before the loop: every retried attempt writes the same check-in.
  const now = nowIso();
  const ids = { checkin: newId(), labels: (input.labels ?? []).map(() => newId()) };
  const storedView = async (stored: CheckinRecord): Promise<CheckinView> => ({ checkin: stored, ...(await readableGoal(ctx, stored.goal_uuid)) });
  return createdOrStored(ctx, checkinEntity, ids.checkin, () => writeCheckin(ctx, input, now, ids), storedView);
}

async function writeCheckin(ctx: DomainCtx, input: CheckinCreateInput, now: string, ids: { checkin: string; labels: string[] }): Promise<CheckinView> {
  const goalUuid = input.goal_uuid.toLowerCase();
  const hidden = () => unknownGoal(input.goal_uuid);
  let created!: CheckinRecord;
  let createdLabels: LabelRecord[] = [];
  const { goal, access } = await commitOnGoal(ctx, async () => {
    const { stored, state, extra } = await readGoalState(ctx, goalUuid, 1, () => resolveLabelNames(ctx, input.labels ?? [], ids.labels, now), hidden);
    const write = decided(decideCreate(state, input, extra.labels, { ...commandContext(ctx), hidden }, now, ids));
    const tx = new WriteTx(ctx).create(checkinEntity, write.checkin).putSide(orderKeyOf(ctx, write.checkin), orderItem(write.checkin));
    addLabelCreates(tx, extra.created);
    const committed = await commitWithRollups(ctx, tx, stored, write.goal);
    created = write.checkin;
    createdLabels = extra.created;
    return { ...committed, access: state.access };
  });
  primeLabels(ctx.loader, createdLabels);
  return { checkin: created, goal, access };
}

export async function updateCheckin(ctx: DomainCtx, id: string, input: CheckinUpdateInput): Promise<CheckinView> {
  // New labels' ids are drawn once, before the loop: every retried attempt names the same labels.
  const labelIds = (input.labels ?? []).map(() => newId());
  let known: Stored<CheckinRecord> | undefined = await storedCheckin(ctx, id, true);
  const goalUuid = known.record.goal_uuid;
  let updated!: CheckinRecord;
  let createdLabels: LabelRecord[] = [];
  const { goal, access } = await commitOnGoal(ctx, async () => {
    // the first attempt uses the check-in read to learn its goal; a retry reads it again (its write is conditioned on the version read)
    const now = nowIso();
    const [current, read] = await Promise.all([
      known ?? storedCheckin(ctx, id, true),
      readGoalState(ctx, goalUuid, 1, async () => (input.labels === undefined ? undefined : resolveLabelNames(ctx, input.labels, labelIds, now)), () => goalNotFound(goalUuid)),
    ]);
    known = undefined;
    const write = decided(decideUpdate(read.state, current.record, input, read.extra?.labels, commandContext(ctx), now));
    const tx = new WriteTx(ctx).replace(checkinEntity, current, write.checkin);
    addLabelCreates(tx, read.extra?.created ?? []);
    const committed = await commitWithRollups(ctx, tx, read.stored, write.goal);
    updated = write.checkin;
    createdLabels = read.extra?.created ?? [];
    return { ...committed, access: read.state.access };
  });
  primeLabels(ctx.loader, createdLabels);
  return { checkin: updated, goal, access };
}

/** Hard-deletes a check-in; when it was the goal's latest, the goal follows the one latest afterwards. Returns the deleted record. */
export async function deleteCheckin(ctx: DomainCtx, id: string): Promise<CheckinView> {
  let known: Stored<CheckinRecord> | undefined = await storedCheckin(ctx, id, true);
  const goalUuid = known.record.goal_uuid;
  let deleted!: CheckinRecord;
  const { goal, access } = await commitOnGoal(ctx, async () => {
    const [current, read] = await Promise.all([known ?? storedCheckin(ctx, id, true), readGoalState(ctx, goalUuid, 2, async () => undefined, () => goalNotFound(goalUuid))]);
    known = undefined;
    const next = deleteNeedsNext(read.state.newest, id) ? (await getEntity(ctx, checkinEntity, read.state.newest[1]!.id, true))?.record : undefined;
    const write = decided(decideDelete(read.state, current.record, next, nowIso()));
    const committed = await commitWithRollups(ctx, new WriteTx(ctx).remove(checkinEntity, current).deleteSide(orderKeyOf(ctx, current.record)), read.stored, write.goal);
    deleted = current.record;
    return { ...committed, access: read.state.access };
  });
  return { checkin: deleted, goal, access };
}

const orderKeyOf = (ctx: DataCtx, c: CheckinRecord) => checkinOrderItemKey(ctx.tenantId, c.goal_uuid, checkinOrderKey(c));
const orderItem = (c: CheckinRecord) => ({ id: c.uuid, kind: 'checkin_order' });
